//! `FSGUI_TRACE=1`: one line on stderr per step of a keystroke's way to
//! the screen, stamped with `CLOCK_MONOTONIC` in milliseconds (the clock
//! `benches/xlatency.c` stamps its keys and screen changes with), so a
//! bench can split a keystroke's latency into its parts: the frame that
//! read the key, the query sent, the daemon's answer (its own time
//! inside), the answer applied, the frame that drew it. Off (one relaxed
//! load per call) unless the variable is set when the window starts.

use std::io::Write;
use std::sync::OnceLock;

fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("FSGUI_TRACE").is_some_and(|v| !v.is_empty() && v != "0"))
}

/// Milliseconds of `CLOCK_MONOTONIC`.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn now_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

/// Milliseconds since the first call (no shared clock to join elsewhere).
#[cfg(not(unix))]
pub fn now_ms() -> f64 {
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
        * 1e3
}

/// True when tracing: callers build their line only then.
pub fn enabled() -> bool {
    on()
}

/// Writes `at_ms what` when tracing.
pub fn event(what: std::fmt::Arguments<'_>) {
    if on() {
        let line = format!("fsgui-trace {:.2} {what}\n", now_ms());
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}
