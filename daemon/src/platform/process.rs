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

/// Takes out of the daemon's resident set the pages of files it maps and
/// only reads: its code, the libraries' code and their symbol tables. They
/// stay in the page cache, so a page touched again comes back through a
/// minor fault, without a read. Returns the bytes that were resident.
///
/// Why: an idle daemon's RSS held every code page it had ever run (its
/// start-up, the walk, SQLite's schema work, the migrations): 12-16 MiB of
/// file-backed pages at 1M entries without LTO, more than the little an
/// idle daemon that watches and answers `status` runs. The kernel would
/// drop them under memory pressure anyway; this drops them once the
/// daemon is quiet.
///
/// Only read-only mappings of files with no private (copy-on-write) pages,
/// in memory or swapped out, are given back: their pages are exactly the
/// file's, so dropping them changes nothing the process reads. A mapping
/// whose pages were written (tables relocated before RELRO made them
/// read-only, data) keeps them. And only within the segments the dynamic
/// loader mapped (`dl_iterate_phdr`), which stay mapped for the process's
/// life: a file mapped for a while (a backtrace's symbols) could be
/// unmapped, and its addresses reused by the heap, between the reading of
/// `smaps` and the advice.
///
/// Linux: `MADV_DONTNEED` on each such mapping, found in
/// `/proc/self/smaps`. Elsewhere: nothing.
#[allow(unsafe_code)]
pub fn release_mapped_files() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
            return 0;
        };
        let loaded = loaded_segments();
        let mut released = 0;
        for m in file_pages_to_release(&smaps) {
            if !loaded.iter().any(|&(a, b)| a <= m.start && m.end <= b) {
                continue;
            }
            // SAFETY: a whole mapping of this process, read-only and with
            // no private pages (see `file_pages_to_release`), so its pages
            // are the file's and come back unchanged on the next touch. No
            // Rust object lives in it: it holds code and tables the loader
            // mapped.
            let r = unsafe {
                libc::madvise(
                    m.start as *mut libc::c_void,
                    m.end - m.start,
                    libc::MADV_DONTNEED,
                )
            };
            if r == 0 {
                released += m.rss;
            }
        }
        released
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// The address ranges of the loaded objects' `PT_LOAD` segments (the
/// executable, the libraries), widened to whole pages.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn loaded_segments() -> Vec<(usize, usize)> {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: `data` is the Vec passed below, and `info` and its
        // program headers are the loader's, valid during this call.
        unsafe {
            let out = &mut *(data as *mut Vec<(usize, usize)>);
            let info = &*info;
            for k in 0..usize::from(info.dlpi_phnum) {
                let ph = &*info.dlpi_phdr.add(k);
                if ph.p_type == libc::PT_LOAD {
                    let start = (info.dlpi_addr as usize).wrapping_add(ph.p_vaddr as usize);
                    out.push((start, start.wrapping_add(ph.p_memsz as usize)));
                }
            }
        }
        0
    }
    let mut out: Vec<(usize, usize)> = Vec::new();
    // SAFETY: the callback only reads what the loader hands it and writes
    // to `out`, which outlives the call.
    unsafe {
        libc::dl_iterate_phdr(Some(each), (&mut out as *mut Vec<(usize, usize)>).cast());
    }
    // SAFETY: sysconf takes an integer.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
        .ok()
        .filter(|p| p.is_power_of_two())
        .unwrap_or(4096);
    out.into_iter()
        .map(|(a, b)| (a & !(page - 1), b.saturating_add(page - 1) & !(page - 1)))
        .collect()
}

/// The bytes of a `/proc` figure in kibibytes (`  1024 kB`).
#[cfg(any(target_os = "linux", test))]
fn kib_bytes(figure: &str) -> Option<u64> {
    Some(
        figure
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse::<u64>()
            .ok()?
            * 1024,
    )
}

/// One mapping that [`release_mapped_files`] may give back.
#[cfg(any(target_os = "linux", test))]
#[derive(Debug, PartialEq)]
struct FileMapping {
    start: usize,
    end: usize,
    /// Resident bytes.
    rss: u64,
}

/// The mappings in `smaps` (the text of `/proc/self/smaps`) of a file, not
/// writable, with resident pages and no private ones, in memory or
/// swapped out (`Anonymous: 0 kB`, `Swap: 0 kB`). Device, memfd and System
/// V mappings are left out.
#[cfg(any(target_os = "linux", test))]
fn file_pages_to_release(smaps: &str) -> Vec<FileMapping> {
    let mut out = Vec::new();
    // The mapping being read (start, end, whether it may be given back),
    // its Rss, and whether its Anonymous and Swap lines both said 0.
    let mut cur: Option<(usize, usize, bool)> = None;
    let (mut rss, mut anon_zero, mut swap_zero) = (0u64, false, false);
    let mut flush = |cur: Option<(usize, usize, bool)>, rss: u64, private_zero: bool| {
        if let Some((start, end, true)) = cur
            && private_zero
            && rss > 0
        {
            out.push(FileMapping { start, end, rss });
        }
    };
    for line in smaps.lines() {
        let mut fields = line.split_ascii_whitespace();
        let Some(first) = fields.next() else { continue };
        if let Some((a, b)) = first.split_once('-')
            && let (Ok(start), Ok(end)) =
                (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
        {
            flush(cur.take(), rss, anon_zero && swap_zero);
            (rss, anon_zero, swap_zero) = (0, false, false);
            let perms = fields.next().unwrap_or("").as_bytes();
            // Then offset, device and inode; then the path.
            let path = fields.nth(3).unwrap_or("");
            let eligible = perms.len() == 4
                && perms[0] == b'r'
                && perms[1] == b'-'
                && path.starts_with('/')
                && !path.starts_with("/dev/")
                && !path.starts_with("/memfd:")
                && !path.starts_with("/SYSV")
                && end > start;
            cur = Some((start, end, eligible));
        } else if first == "Rss:" {
            rss = kib_bytes(&line[4..]).unwrap_or(0);
        } else if first == "Anonymous:" {
            anon_zero = kib_bytes(&line[10..]) == Some(0);
        } else if first == "Swap:" {
            swap_zero = kib_bytes(&line[5..]) == Some(0);
        }
    }
    flush(cur, rss, anon_zero && swap_zero);
    out
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
            kib_bytes(s.lines().find_map(|l| l.strip_prefix(name))?)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_read_only_file_mappings_without_private_pages_are_given_back() {
        let smaps = "\
55d0a0000000-55d0a0200000 r--p 00000000 fe:00 123 /usr/bin/fsindexd
Rss:                1024 kB
Anonymous:             0 kB
Swap:                  0 kB
55d0a0200000-55d0a0a00000 r-xp 00200000 fe:00 123 /usr/bin/fsindexd
Size:               8192 kB
Rss:                4096 kB
Pss:                4096 kB
Anonymous:             0 kB
Swap:                  0 kB
55d0a0a00000-55d0a0b00000 r--p 00a00000 fe:00 123 /usr/bin/fsindexd
Rss:                 700 kB
Anonymous:           700 kB
55d0a0b00000-55d0a0b08000 rw-p 00b00000 fe:00 123 /usr/bin/fsindexd
Rss:                  32 kB
Anonymous:             0 kB
Swap:                  0 kB
55d0a1000000-55d0a3000000 rw-p 00000000 00:00 0 [heap]
Rss:               20000 kB
Anonymous:         20000 kB
7f0000000000-7f0000100000 r-xp 00000000 fe:00 9 /opt/a dir/lib b.so
Rss:                  12 kB
Anonymous:             0 kB
Swap:                  0 kB
7f0000100000-7f0000200000 r-xp 00000000 fe:00 9 /opt/lib/untouched.so
Rss:                   0 kB
Anonymous:             0 kB
Swap:                  0 kB
7f0000200000-7f0000300000 r--s 00000000 00:01 7 /dev/zero (deleted)
Rss:                   8 kB
Anonymous:             0 kB
Swap:                  0 kB
7f0000280000-7f0000290000 r--p 00010000 fe:00 9 /opt/lib/swapped.so
Rss:                   4 kB
Anonymous:             0 kB
Swap:                  8 kB
7f0000300000-7f0000301000 r--p 00000000 00:00 0 [vvar]
Rss:                   4 kB
Anonymous:             0 kB
Swap:                  0 kB
7ffff0000000-7ffff0001000 r-xp 00000000 00:00 0
Rss:                   4 kB
Anonymous:             0 kB
Swap:                  0 kB
";
        let got = file_pages_to_release(smaps);
        let want = [
            (0x55d0a0000000, 0x55d0a0200000, 1024),
            (0x55d0a0200000, 0x55d0a0a00000, 4096),
            (0x7f0000000000, 0x7f0000100000, 12),
        ]
        .map(|(start, end, kib)| FileMapping {
            start,
            end,
            rss: kib << 10,
        });
        assert_eq!(got, want);
    }

    /// The test binary's own code pages leave its resident set, and the
    /// process goes on as before: code runs, relocated tables (a trait
    /// object's vtable, formatting's) still point where they should.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_live_process_gives_its_code_pages_back_and_runs_on() {
        use std::fmt::Write as _;
        let rss_file = || {
            let s = std::fs::read_to_string("/proc/self/status").unwrap();
            let line = s.lines().find(|l| l.starts_with("RssFile:")).unwrap();
            line["RssFile:".len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .unwrap()
        };
        let before = rss_file();
        let released = release_mapped_files();
        let after = rss_file();
        assert!(released > 0, "nothing given back (RssFile {before} kB)");
        assert!(after < before, "RssFile {before} kB -> {after} kB");
        let shapes: Vec<Box<dyn std::fmt::Debug>> =
            vec![Box::new(1.5f64), Box::new("x"), Box::new(vec![3u8])];
        let mut text = String::new();
        for s in &shapes {
            write!(text, "{s:?};").unwrap();
        }
        assert_eq!(text, "1.5;\"x\";[3];");
    }
}
