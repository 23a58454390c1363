//! `fsctl roots list|add PATH|remove PATH`

use std::path::PathBuf;
use std::process::ExitCode;

use fsindex_proto::v1 as pb;

use crate::cmd::status::{root_json, state_name};
use crate::global::Global;
use crate::output::{absolute, count, lossy, path_bytes};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// List the roots and their state.
    List,
    /// Add a folder as a root; its scan starts at once.
    Add {
        path: PathBuf,
        /// Also index what its files say, for `content:` queries (on an
        /// existing root: turn that on).
        #[arg(long)]
        content: bool,
    },
    /// Remove a root and everything indexed under it.
    Remove { path: PathBuf },
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let (action, path, content) = match &a.action {
        Action::List => (pb::RootsAction::List, Vec::new(), false),
        Action::Add { path, content } => {
            (pb::RootsAction::Add, path_bytes(&absolute(path)?), *content)
        }
        Action::Remove { path } => (pb::RootsAction::Remove, path_bytes(&absolute(path)?), false),
    };
    let mut client = g.client().await?;
    let r = client
        .roots(pb::RootsRequest {
            action: action as i32,
            path,
            content,
        })
        .await?
        .into_inner();
    for root in &r.roots {
        if g.json {
            println!("{}", root_json(root));
        } else {
            println!(
                "{}  {}  {} entries",
                lossy(&root.path),
                state_name(root.state),
                count(root.entries)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
