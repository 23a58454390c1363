//! `fsctl completions SHELL`: a completion script from the same clap
//! definition as `--help`, on stdout.

use std::process::ExitCode;

use clap::CommandFactory;
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

pub fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let mut cmd = crate::Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(a.shell, &mut cmd, "fsctl", &mut out);
    Ok(ExitCode::SUCCESS)
}
