//! `fsctl organise check|apply|undo|history`: a reorganisation plan
//! checked, applied with a journal, and undone (see `crate::organise`).
//! The moves run in this process, as the user who runs it; nothing here
//! needs the daemon, whose watcher sees the changes like any others.
//!
//! Exit codes: 0 all went well; 1 the check found problems, or some steps
//! were skipped, failed or refused (each listed with its reason); 2 an
//! error (nothing applied when the plan itself is at fault).

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::json;

use crate::global::Global;
use crate::organise::apply::{self, Report};
use crate::organise::check::{self, Checked};
use crate::organise::journal::{self, Journal};
use crate::organise::plan::{self, Local, RawItem};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Check a plan against the file system, touching nothing: problems,
    /// and the tree it leaves.
    Check(PlanArgs),
    /// Apply a plan: shows the check, asks on a terminal, then moves, each
    /// step re-checked and journalled.
    Apply(ApplyArgs),
    /// Put back what a plan moved (default: the last plan applied).
    Undo(UndoArgs),
    /// The plans applied, newest last; with an ID, that plan's steps.
    History(HistoryArgs),
}

#[derive(Debug, clap::Args)]
struct PlanArgs {
    /// The plan (JSON: {"moves": [{"from": ..., "to": ...}, ...]}); `-` reads stdin.
    plan: PathBuf,
}

#[derive(Debug, clap::Args)]
struct ApplyArgs {
    #[command(flatten)]
    plan: PlanArgs,
    /// Apply without asking (needed when stdin is not a terminal).
    #[arg(long, short = 'y')]
    yes: bool,
}

#[derive(Debug, clap::Args)]
struct UndoArgs {
    /// The plan to undo (see `fsctl organise history`).
    id: Option<i64>,
    /// Undo without asking (needed when stdin is not a terminal).
    #[arg(long, short = 'y')]
    yes: bool,
}

#[derive(Debug, clap::Args)]
struct HistoryArgs {
    /// Show this plan's steps.
    id: Option<i64>,
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    // Blocking file-system work; off the runtime's thread.
    let json = g.json;
    let sub = match &a.command {
        Sub::Check(p) => Job::Check(p.plan.clone()),
        Sub::Apply(p) => Job::Apply(p.plan.plan.clone(), p.yes),
        Sub::Undo(u) => Job::Undo(u.id, u.yes),
        Sub::History(h) => Job::History(h.id),
    };
    tokio::task::spawn_blocking(move || run_blocking(json, sub))
        .await
        .context("organise")?
}

enum Job {
    Check(PathBuf),
    Apply(PathBuf, bool),
    Undo(Option<i64>, bool),
    History(Option<i64>),
}

/// The journal, with whatever a crash left finished first.
fn journal() -> anyhow::Result<Journal> {
    let mut j = Journal::open(&journal::default_dir())?;
    for line in apply::recover(&mut j)? {
        eprintln!("fsctl: {line}");
    }
    Ok(j)
}

fn run_blocking(json: bool, job: Job) -> anyhow::Result<ExitCode> {
    match job {
        Job::Check(p) => {
            let (raw, c) = load(&p)?;
            print_check(json, &raw, &c)?;
            Ok(if c.problems.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Job::Apply(p, yes) => {
            let mut j = journal()?;
            let (raw, c) = load(&p)?;
            if c.blocking() {
                print_check(json, &raw, &c)?;
                bail!("the plan contradicts itself: nothing was applied");
            }
            if !json {
                print_check(false, &raw, &c)?;
            }
            if c.steps.is_empty() {
                bail!("nothing to apply: every item has a problem or is a no-op");
            }
            if !yes {
                confirm(&format!(
                    "Apply {} steps{}?",
                    c.steps.len(),
                    if c.problems.is_empty() {
                        String::new()
                    } else {
                        format!(", skipping {} items with problems", c.problems.len())
                    }
                ))?;
            }
            let origin = std::path::absolute(&p)
                .map(|a| a.display().to_string())
                .unwrap_or_else(|_| "-".into());
            let r = apply::apply(&mut j, &c, &origin, raw.len())?;
            print_report(json, &r, false, &c.problems)?;
            Ok(exit(&r, !c.problems.is_empty()))
        }
        Job::Undo(id, yes) => {
            let mut j = journal()?;
            let Some(id) = id.map_or_else(|| j.last_undoable(), |i| Ok(Some(i)))? else {
                bail!("no plan to undo (see `fsctl organise history`)");
            };
            if !yes {
                confirm(&format!("Undo plan {id}?"))?;
            }
            let r = apply::undo(&mut j, id)?;
            print_report(json, &r, true, &[])?;
            Ok(exit(&r, false))
        }
        Job::History(id) => {
            let j = journal()?;
            history(&j, json, id)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn exit(r: &Report, problems: bool) -> ExitCode {
    if r.skipped + r.failed > 0 || problems {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn confirm(question: &str) -> anyhow::Result<()> {
    if !std::io::stdin().is_terminal() {
        bail!("stdin is not a terminal: pass --yes to go ahead without asking");
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    if !matches!(line.trim(), "y" | "Y" | "yes") {
        bail!("not applied: the answer was not yes");
    }
    Ok(())
}

/// Reads, resolves and checks the plan at `p`.
fn load(p: &std::path::Path) -> anyhow::Result<(Vec<RawItem>, Checked)> {
    let mut text = String::new();
    if p.as_os_str() == "-" {
        std::io::stdin().read_to_string(&mut text)?;
    } else {
        text = std::fs::read_to_string(p)
            .with_context(|| format!("{}: cannot read the plan", p.display()))?;
    }
    let file = plan::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
    let base = match &file.base {
        Some(b) => std::path::absolute(b)?,
        None => std::env::current_dir()?,
    };
    let raw = if file.moves.is_empty() {
        file.actions
    } else {
        file.moves
    };
    let items = plan::resolve(&raw, &Local { base })
        .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
    Ok((raw, check::check(&items)))
}

/// The plan again, each source's size and mtime as seen now, so that
/// apply of this output skips what changes in between.
fn checked_moves(raw: &[RawItem], c: &Checked) -> Vec<RawItem> {
    raw.iter()
        .enumerate()
        .map(|(i, r)| {
            let mut r = r.clone();
            if let Some(s) = c
                .steps
                .iter()
                .find(|s| s.item == i && s.kind == check::StepKind::Move)
                && let Some(f) = s.seen.filter(|f| !f.is_dir)
                && r.action.as_deref().unwrap_or("move") != "merge"
            {
                r.size = Some(f.size);
                r.mtime_ns = Some(f.mtime_ns);
            }
            r
        })
        .collect()
}

fn print_check(json: bool, raw: &[RawItem], c: &Checked) -> anyhow::Result<()> {
    let tree = check::tree(c);
    if json {
        let steps: Vec<_> = c
            .steps
            .iter()
            .map(|s| {
                json!({
                    "item": s.item,
                    "action": s.kind.name(),
                    "from": crate::cmd::mcp::names::shown_path(&s.src),
                    "to": crate::cmd::mcp::names::shown_path(&s.dst),
                })
            })
            .collect();
        println!(
            "{}",
            json!({
                "ok": c.problems.is_empty(),
                "items": raw.len(),
                "blocking": c.blocking(),
                "problems": c.problems,
                "notes": c.notes,
                "base": crate::cmd::mcp::names::shown_path(&c.base),
                "steps": steps,
                "tree": tree,
                "moves": checked_moves(raw, c),
            })
        );
        return Ok(());
    }
    if c.problems.is_empty() {
        println!(
            "Plan of {} items, {} steps: no problems found",
            raw.len(),
            c.steps.len()
        );
    } else {
        println!(
            "Plan of {} items, {} steps: {} problems{}",
            raw.len(),
            c.steps.len(),
            c.problems.len(),
            if c.blocking() {
                " (the plan contradicts itself: it cannot be applied)"
            } else {
                " (apply skips those items)"
            }
        );
    }
    for p in &c.problems {
        let items: Vec<String> = p.items.iter().map(|i| i.to_string()).collect();
        println!(
            "- {} (item {}): {}: {}",
            p.kind,
            items.join(", "),
            p.path,
            p.detail
        );
    }
    for n in &c.notes {
        println!("- note: {n}");
    }
    println!("After the plan:");
    print!("{tree}");
    Ok(())
}

fn print_report(
    json: bool,
    r: &Report,
    undo: bool,
    problems: &[check::Problem],
) -> anyhow::Result<()> {
    if json {
        let mut v = serde_json::to_value(r)?;
        if !undo {
            v["problems"] = serde_json::to_value(problems)?;
        }
        println!("{v}");
        return Ok(());
    }
    for s in &r.steps {
        if s.state == "done" || s.state == "undone" {
            continue;
        }
        println!(
            "{} {} {} -> {}: {}",
            s.state,
            s.action,
            s.from,
            s.to,
            s.reason.as_deref().unwrap_or("")
        );
    }
    if undo {
        println!(
            "Plan {}: {} steps undone, {} refused ({})",
            r.id, r.done, r.skipped, r.state
        );
    } else {
        println!(
            "Plan {}: {} steps done, {} skipped, {} failed. Undo with `fsctl organise undo {}`.",
            r.id, r.done, r.skipped, r.failed, r.id
        );
    }
    Ok(())
}

fn history(j: &Journal, json: bool, id: Option<i64>) -> anyhow::Result<()> {
    if let Some(id) = id {
        let Some(p) = j.plan(id)? else {
            bail!("no plan {id} in the journal");
        };
        let undo = matches!(p.state.as_str(), "undone" | "partly-undone" | "undoing");
        let r = apply::report(j, id, false)?;
        if json {
            let steps = j.steps(id)?;
            for (s, row) in r.steps.iter().zip(&steps) {
                let mut v = serde_json::to_value(s)?;
                if let Some(u) = &row.undo {
                    v["undo"] = json!(u);
                }
                if let Some(u) = &row.undo_reason {
                    v["undoReason"] = json!(u);
                }
                println!("{v}");
            }
            return Ok(());
        }
        println!(
            "Plan {id}: {}{}",
            p.state,
            p.note.map(|n| format!(" ({n})")).unwrap_or_default()
        );
        for (s, row) in r.steps.iter().zip(j.steps(id)?) {
            let u = if undo {
                match (&row.undo, &row.undo_reason) {
                    (Some(u), Some(why)) => format!(" [undo: {u}: {why}]"),
                    (Some(u), None) => format!(" [undo: {u}]"),
                    _ => String::new(),
                }
            } else {
                String::new()
            };
            println!(
                "{:>5} {:<8} {} -> {} ({}{}){u}",
                s.item,
                s.action,
                s.from,
                s.to,
                s.state,
                s.reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default()
            );
        }
        return Ok(());
    }
    let plans = j.plans()?;
    if !json && plans.is_empty() {
        println!("No plans applied yet.");
    }
    for p in plans {
        let counts = j.counts(p.id)?;
        if json {
            let c: serde_json::Map<String, serde_json::Value> =
                counts.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            println!(
                "{}",
                json!({
                    "id": p.id,
                    "started": crate::output::rfc3339(p.started_ns),
                    "finished": p.finished_ns.map(crate::output::rfc3339),
                    "state": p.state,
                    "items": p.items,
                    "origin": p.origin,
                    "steps": c,
                    "note": p.note,
                })
            );
        } else {
            let c: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
            println!(
                "{:>4}  {}  {:<13} {} items ({})  {}{}",
                p.id,
                crate::output::rfc3339(p.started_ns),
                p.state,
                p.items,
                c.join(", "),
                p.origin,
                p.note.map(|n| format!("  [{n}]")).unwrap_or_default()
            );
        }
    }
    Ok(())
}
