//! `fsctl fleet ...` from `fsctl`: the same command line, run by
//! `fsctl-fleet`, which links the fleet's PostgreSQL client and its TLS
//! (the system's OpenSSL on Linux) so that `fsctl` need not load them at
//! every start (see the crate's doc).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// The helper's program name (`.exe` on Windows).
pub const HELPER: &str = "fsctl-fleet";

/// Where `fsctl-fleet` is: beside this executable (a build's
/// `target/release`, `/usr/bin`, an install folder), else in
/// `../libexec/fsindex/` from it (as the daemon finds its extraction
/// child), else on `PATH` (as fsctl finds fsindexd).
pub fn find() -> Option<PathBuf> {
    fsindex_client::find_program(HELPER, &["../libexec/fsindex"])
}

/// Runs this process's command line (`fleet ...` and the global options,
/// in the order given) in `fsctl-fleet`: on Unix in its place, keeping
/// the process, its streams and its signals; elsewhere as a child whose
/// exit code becomes ours.
pub fn run() -> anyhow::Result<ExitCode> {
    let Some(helper) = find() else {
        anyhow::bail!(
            "fleet commands need {HELPER}, which holds the fleet's PostgreSQL client; \
             it was not found beside fsctl, in ../libexec/fsindex/ from it, or on PATH \
             (it is built and installed with fsctl)"
        );
    };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut cmd = std::process::Command::new(&helper);
    cmd.args(&args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Only returns on failure.
        let e = cmd.arg0("fsctl").exec();
        Err(anyhow::anyhow!("cannot run {}: {e}", helper.display()))
    }
    #[cfg(not(unix))]
    {
        let status = cmd
            .status()
            .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", helper.display()))?;
        Ok(match status.code() {
            Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(2)),
            None => ExitCode::from(2),
        })
    }
}
