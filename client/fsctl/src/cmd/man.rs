//! `fsctl man [--dir DIR]`: man pages from the same clap definition as
//! `--help`: fsctl(1) on stdout, or fsctl.1 and one page per subcommand
//! (fsctl-search.1, ...) written into DIR.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write fsctl.1 and a page per subcommand into DIR (created if needed)
    /// instead of printing fsctl.1.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// `cmd` is the whole command line as clap defines it (handed over by
/// `main`, so that this module needs nothing from the binary root).
pub fn run(a: &Args, cmd: clap::Command) -> anyhow::Result<ExitCode> {
    let Some(dir) = &a.dir else {
        let mut out = std::io::stdout().lock();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    write_pages(cmd, dir, &mut written)
        .with_context(|| format!("writing into {}", dir.display()))?;
    for path in written {
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The page of `cmd` and of each visible subcommand, depth first
/// (clap_mangen names them parent-child.1).
fn write_pages(
    cmd: clap::Command,
    dir: &std::path::Path,
    written: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    fn walk(
        cmd: clap::Command,
        dir: &std::path::Path,
        written: &mut Vec<PathBuf>,
    ) -> std::io::Result<()> {
        written.push(clap_mangen::Man::new(cmd.clone()).generate_to(dir)?);
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            walk(sub, dir, written)?;
        }
        Ok(())
    }
    walk(cmd, dir, written)
}
