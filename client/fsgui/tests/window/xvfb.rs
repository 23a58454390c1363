//! The real window under Xvfb (xvfb-smoke.sh). Runs when `FSGUI_XVFB=1`,
//! or when unset and Xvfb, xdotool and ImageMagick are installed (tests/setup.sh
//! installs them); `FSGUI_XVFB=0` turns it off.

use std::path::Path;
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether a test under Xvfb runs: `FSGUI_XVFB=1` always, `0` never,
/// unset when every one of `tools` is installed (says so when skipped).
pub fn wanted(tools: &[&str]) -> bool {
    let wanted = match std::env::var("FSGUI_XVFB").as_deref() {
        Ok("0") => false,
        Ok(_) => true,
        Err(_) => tools.iter().all(|t| have(t)),
    };
    if !wanted {
        eprintln!("skipped: FSGUI_XVFB=0, or one of {tools:?} is not installed");
    }
    wanted
}

#[test]
fn the_real_window_under_xvfb_takes_keys_and_screenshots() {
    if !wanted(&["Xvfb", "xdotool", "import"]) {
        return;
    }
    let bins = super::util::bin_dir();
    if !bins.join("fsgui").is_file() {
        panic!(
            "{} is missing: `cargo build --workspace --bins` first",
            bins.join("fsgui").display()
        );
    }
    let out = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("xvfb-smoke.sh");
    let run = Command::new("bash")
        .arg(&script)
        .arg(out.path())
        .env("FSINDEX_BIN_DIR", &bins)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "xvfb-smoke.sh failed:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    for shot in ["typed.png", "screenshot.png"] {
        let bytes = std::fs::read(out.path().join(shot)).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{shot} is a PNG");
        let img = image::load_from_memory(&bytes).unwrap().to_rgba8();
        assert!(img.width() >= 800 && img.height() >= 500, "{shot} size");
        // Not a blank frame: many distinct colours (text, icons, bars).
        let distinct: std::collections::HashSet<[u8; 4]> =
            img.pixels().step_by(7).map(|p| p.0).collect();
        assert!(
            distinct.len() > 20,
            "{shot} looks blank ({} colours)",
            distinct.len()
        );
    }
}
