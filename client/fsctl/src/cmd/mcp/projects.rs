//! `list_projects`: "what projects do I have?" The daemon's Projects RPC
//! under one folder or every allowed directory, paged to the byte budget
//! like every other list.

use std::fmt::Write as _;

use fsindex_proto::v1 as pb;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::index::{Ctx, Outcome, next_cursor, no_allowed, page, reply, showing};
use super::names::{shown, shown_path};
use crate::output::{path_bytes, rfc3339};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectsParams {
    /// Only under this folder (default: every allowed directory).
    pub path: Option<String>,
    /// Projects per page at most (default 200; fewer when the answer would pass the byte budget).
    #[schemars(range(min = 1, max = 5000))]
    pub limit: Option<u64>,
    /// The nextCursor of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectsAnswer {
    /// Projects in all.
    pub total: u64,
    pub offset: u64,
    /// Parents before the projects nested in them.
    pub projects: Vec<ProjectLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectLine {
    pub path: String,
    /// git, cargo, npm, python, go, maven, gradle, dotnet, cmake, xcode, latex.
    pub kinds: Vec<String>,
    /// Most files first, at most 3, as "Rust 12".
    pub languages: Vec<String>,
    /// Allocated bytes, as `du -s -B1`.
    pub bytes: u64,
    pub files: u64,
    /// Newest modification of a file inside (`.git` not counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtime: Option<String>,
    /// The branch `.git/HEAD` names, or "detached at HASH".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The project this one is nested in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

fn line(p: &pb::Project) -> ProjectLine {
    let branch = crate::cmd::projects::branch_text(p);
    ProjectLine {
        path: shown(&p.path),
        kinds: p.kinds.clone(),
        languages: p
            .languages
            .iter()
            .map(|l| format!("{} {}", l.language, l.files))
            .collect(),
        bytes: p.bytes,
        files: p.files,
        mtime: (p.mtime_ns != 0).then(|| rfc3339(p.mtime_ns)),
        branch: (!branch.is_empty()).then_some(branch),
        parent: (!p.parent.is_empty()).then(|| shown(&p.parent)),
    }
}

pub async fn list_projects(ctx: &Ctx, p: ProjectsParams) -> Outcome {
    let guard = ctx.guard();
    let dirs = match &p.path {
        Some(raw) => vec![guard.existing(raw)?],
        None => guard.allowed().to_vec(),
    };
    if dirs.is_empty() {
        return Err(no_allowed());
    }
    let fp = ("list_projects", dirs.clone());
    let pg = page(p.cursor.as_deref(), p.limit, 200, 5000, &fp)?;
    let mut all = Vec::new();
    for d in &dirs {
        let bytes = path_bytes(d);
        let r = ctx
            .rpc(|mut c| {
                let path = bytes.clone();
                async move {
                    c.projects(pb::ProjectsRequest { path })
                        .await
                        .map(tonic::Response::into_inner)
                }
            })
            .await
            .map_err(|s| ctx.daemon_error(&shown_path(d), s))?;
        all.extend(r.projects.iter().map(line));
    }
    let total = all.len() as u64;
    let rows: Vec<ProjectLine> = all.into_iter().skip(pg.offset as usize).collect();
    let rows = &rows[..rows.len().min(pg.limit as usize)];
    let (out, text) = ctx.fit(rows.len(), |k| {
        let next = next_cursor(pg, k as u64, total, &fp);
        let mut text = format!(
            "{}\n# path\tkinds\tbranch\tlanguages\tbytes\tfiles\tmtime\tparent\n",
            showing(pg.offset, k, total, "projects", next.as_deref())
        );
        for r in &rows[..k] {
            let _ = writeln!(
                text,
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                r.path,
                r.kinds.join(","),
                r.branch.as_deref().unwrap_or("-"),
                r.languages.join(", "),
                r.bytes,
                r.files,
                r.mtime.as_deref().unwrap_or("-"),
                r.parent.as_deref().unwrap_or("-"),
            );
        }
        (
            ProjectsAnswer {
                total,
                offset: pg.offset,
                projects: rows[..k].to_vec(),
                next_cursor: next,
            },
            text,
        )
    });
    reply(&out, text)
}
