//! `fsctl completions SHELL`: a completion script from the same clap
//! definition as `--help`, on stdout.

use std::io::Write;
use std::process::ExitCode;

use clap_complete::Shell;

#[derive(Debug, clap::Args)]
#[command(after_help = "Install, e.g.:
  bash  fsctl completions bash > ~/.local/share/bash-completion/completions/fsctl
  zsh   fsctl completions zsh > ~/.zfunc/_fsctl   (with ~/.zfunc in $fpath)
  fish  fsctl completions fish > ~/.config/fish/completions/fsctl.fish")]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

/// `cmd` is the whole command line as clap defines it (handed over by
/// `main`, so that this module needs nothing from the binary root).
pub fn run(a: &Args, mut cmd: clap::Command) -> anyhow::Result<ExitCode> {
    // clap_complete panics when its writer fails, so the script is made
    // first and written here: a closed pipe (`| head`) then ends quietly,
    // as every other command does.
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "fsctl", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
