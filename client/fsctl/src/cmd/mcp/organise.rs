//! `apply_move_plan` and `undo_move_plan`: the two tools that change the
//! user's files, served only with `fsctl mcp --allow-write`. Every path of
//! the plan goes through the guard (`Guard::entry`: its folder inside an
//! allowed directory, its own name not followed); the work is
//! `crate::organise`'s, as for `fsctl organise`, in this process and with
//! its user's permissions, journalled in that user's journal.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::guard::Guard;
use super::index::{Ctx, Failure, Outcome, reply};
use crate::organise::apply::{self, Outcome as StepOutcome};
use crate::organise::check::{self, Problem};
use crate::organise::journal::{self, Journal};
use crate::organise::plan::{self, RawItem, Resolve};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyParams {
    /// The plan's items, in order: {from, to} moves a file or folder to a
    /// new full path; {action: "rename", from, to: NAME}; {action:
    /// "mkdir", path}; {action: "merge", from: FOLDER, to: FOLDER};
    /// {action: "keep", path}. Optional size and mtimeNs: the source as
    /// checked (skipped when it differs).
    pub moves: Vec<RawItem>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoParams {
    /// The id apply_move_plan answered.
    pub id: i64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyAnswer {
    /// The plan's id in the journal (for undo_move_plan).
    pub id: i64,
    /// applied, undone or partly-undone.
    pub state: String,
    pub done: u64,
    /// Steps skipped (applying) or refused (undoing), each with its reason.
    pub skipped: u64,
    pub failed: u64,
    /// Problems the check found; their items were skipped.
    pub problems: Vec<ProblemOut>,
    /// Steps in all; `steps` holds the first (those not done first).
    pub steps_total: u64,
    pub steps: Vec<StepOut>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProblemOut {
    pub kind: String,
    pub items: Vec<usize>,
    pub path: String,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepOut {
    pub item: usize,
    pub action: String,
    pub from: String,
    pub to: String,
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

struct Guarded(Arc<Guard>);

impl Resolve for Guarded {
    fn resolve(&self, raw: &str, existing: bool) -> Result<PathBuf, String> {
        self.0.entry(raw, existing).map_err(|r| r.0)
    }
}

fn problem_out(p: &Problem) -> ProblemOut {
    ProblemOut {
        kind: p.kind.clone(),
        items: p.items.clone(),
        path: p.path.clone(),
        detail: p.detail.clone(),
    }
}

fn step_out(s: &StepOutcome) -> StepOut {
    StepOut {
        item: s.item,
        action: s.action.clone(),
        from: s.from.clone(),
        to: s.to.clone(),
        state: s.state.clone(),
        via: s.via.clone(),
        reason: s.reason.clone(),
    }
}

pub async fn apply_move_plan(ctx: &Ctx, p: ApplyParams) -> Outcome {
    if p.moves.is_empty() {
        return Err(Failure("moves is empty: give [{from, to}, ...]".into()));
    }
    let guard = ctx.guard();
    let done = tokio::task::spawn_blocking(move || {
        let items = plan::resolve(&p.moves, &Guarded(guard)).map_err(Failure)?;
        let c = check::check(&items);
        if c.blocking() {
            let first: Vec<String> = c
                .problems
                .iter()
                .filter(|p| p.blocking)
                .take(3)
                .map(|p| format!("{} (item {:?}): {}", p.kind, p.items, p.detail))
                .collect();
            return Err(Failure(format!(
                "the plan contradicts itself, nothing was applied: {}",
                first.join("; ")
            )));
        }
        if c.steps.is_empty() {
            return Err(Failure(
                "nothing to apply: every item has a problem or is a no-op (see check_move_plan)"
                    .into(),
            ));
        }
        let mut j = open_journal()?;
        let r =
            apply::apply(&mut j, &c, "mcp", items.len()).map_err(|e| Failure(format!("{e:#}")))?;
        Ok((c.problems, r))
    })
    .await
    .map_err(|e| Failure(format!("internal: {e}")))??;
    answer(ctx, done.0, done.1, false)
}

pub async fn undo_move_plan(ctx: &Ctx, p: UndoParams) -> Outcome {
    let r = tokio::task::spawn_blocking(move || {
        let mut j = open_journal()?;
        apply::undo(&mut j, p.id).map_err(|e| Failure(format!("{e:#}")))
    })
    .await
    .map_err(|e| Failure(format!("internal: {e}")))??;
    answer(ctx, Vec::new(), r, true)
}

fn open_journal() -> Result<Journal, Failure> {
    let mut j = Journal::open(&journal::default_dir()).map_err(|e| Failure(format!("{e:#}")))?;
    apply::recover(&mut j).map_err(|e| Failure(format!("{e:#}")))?;
    Ok(j)
}

fn answer(ctx: &Ctx, problems: Vec<Problem>, r: apply::Report, undo: bool) -> Outcome {
    // Steps that did not go as planned first.
    let mut steps: Vec<StepOut> = r.steps.iter().map(step_out).collect();
    steps.sort_by_key(|s| matches!(s.state.as_str(), "done" | "undone"));
    let problems: Vec<ProblemOut> = problems.iter().map(problem_out).collect();
    let n = steps.len();
    let (out, text) = ctx.fit(n, |k| {
        let mut text = if undo {
            format!(
                "Plan {}: {} steps undone, {} refused ({})\n",
                r.id, r.done, r.skipped, r.state
            )
        } else {
            format!(
                "Plan {}: {} steps done, {} skipped, {} failed; undo_move_plan with id {} puts them back\n",
                r.id, r.done, r.skipped, r.failed, r.id
            )
        };
        for p in &problems {
            let _ = writeln!(text, "- problem {}: {}: {}", p.kind, p.path, p.detail);
        }
        for s in &steps[..k] {
            let _ = writeln!(
                text,
                "- {} {} {} -> {}{}",
                s.state,
                s.action,
                s.from,
                s.to,
                s.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default()
            );
        }
        if k < n {
            let _ = writeln!(text, "({} more steps past the byte budget)", n - k);
        }
        (
            ApplyAnswer {
                id: r.id,
                state: r.state.clone(),
                done: r.done,
                skipped: r.skipped,
                failed: r.failed,
                problems: problems.clone(),
                steps_total: n as u64,
                steps: steps[..k].to_vec(),
            },
            text,
        )
    });
    reply(&out, text)
}
