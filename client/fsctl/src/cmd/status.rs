//! `fsctl status`

use std::process::ExitCode;

use fsindex_proto::v1 as pb;
use serde_json::json;

use crate::global::Global;
use crate::output::{count, lossy, size};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Wait until every root is ready (its scan runs at normal priority
    /// meanwhile, not in the background), then print the status.
    #[arg(long)]
    wait: bool,
    /// With --wait: give up after this many seconds (exit status 1).
    #[arg(long, value_name = "SECS", requires = "wait")]
    timeout: Option<f64>,
}

pub fn state_name(s: i32) -> &'static str {
    match pb::RootState::try_from(s).unwrap_or_default() {
        pb::RootState::Pending => "pending",
        pb::RootState::Scanning => "scanning",
        pb::RootState::Ready => "ready",
        pb::RootState::Error => "error",
        pb::RootState::Unspecified => "unknown",
    }
}

pub fn root_json(r: &pb::RootStatus) -> serde_json::Value {
    json!({
        "path": lossy(&r.path),
        "entries": r.entries,
        "state": state_name(r.state),
        "scanned": r.scanned,
        "errors": r.errors,
        "scanned_at": r.scanned_at,
        "error": if r.error.is_empty() { None } else { Some(&r.error) },
        "watch": r.watch,
        "hashing": r.hashing,
        "priority": if r.priority.is_empty() { None } else { Some(&r.priority) },
    })
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let mut client = g.client().await?;
    let started = std::time::Instant::now();
    let s = loop {
        let s = client
            .status(pb::StatusRequest {
                waiting: a.wait,
                ..Default::default()
            })
            .await?
            .into_inner();
        if !a.wait || s.state == "ready" {
            break s;
        }
        if a.timeout
            .is_some_and(|t| started.elapsed().as_secs_f64() >= t)
        {
            eprintln!(
                "fsctl: not ready after {:.1} s ({} entries so far)",
                started.elapsed().as_secs_f64(),
                count(s.entries)
            );
            return Ok(ExitCode::FAILURE);
        }
        // The daemon keeps a waiting caller's scans at normal priority for
        // 3 s after each call.
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    let organise = crate::organise::journal::status_lines(&crate::organise::journal::default_dir());
    if g.json {
        let mut v = json!({
            "state": s.state,
            "entries": s.entries,
            "roots": s.roots.iter().map(root_json).collect::<Vec<_>>(),
            "db_bytes": s.db_bytes,
            "rss_bytes": s.rss_bytes,
            "cpu_percent": s.cpu_percent,
            "cpu_time_ms": s.cpu_time_ms,
            "system": s.system,
            "listen": if s.listen.is_empty() { None } else { Some(&s.listen) },
            "config_path": if s.config_path.is_empty() { None } else { Some(lossy(&s.config_path)) },
            "rows_written": s.rows_written,
            "persisted": s.persisted,
            "pending_rows": s.pending_rows,
            "notices": s.notices,
            "version": s.version,
            "pid": s.pid,
            "db_path": lossy(&s.db_path),
            "uptime_secs": s.uptime_secs,
            "hashing": s.hashing.as_ref().map(|h| json!({
                "cached": h.cached,
                "files_read": h.files_read,
                "bytes_read": h.bytes_read,
                "cache_hits": h.cache_hits,
                "last_pass": (h.last_pass_secs_ago >= 0).then(|| json!({
                    "secs_ago": h.last_pass_secs_ago,
                    "scope": if h.last_pass_scope.is_empty() { None } else { Some(lossy(&h.last_pass_scope)) },
                    "candidates": h.last_pass_candidates,
                    "read": h.last_pass_read,
                    "unreadable": h.last_pass_unreadable,
                    "background": h.last_pass_background,
                })),
            })),
            "fleet": s.fleet.as_ref().map(|f| json!({
                "host": f.host,
                "database": f.database,
                "connected": f.connected,
                "state": f.state,
                "lag_batches": f.lag_batches,
                "lag_secs": f.lag_secs,
                "last_error": if f.last_error.is_empty() { None } else { Some(&f.last_error) },
                "rows_shipped": f.rows_shipped,
                "reconciles": f.reconciles,
            })),
            "content": s.content.as_ref().map(|c| json!({
                "folders": c.folders.iter().map(|f| json!({
                    "path": lossy(&f.path),
                    "indexed": f.indexed,
                    "queued": f.queued,
                    "failed": f.failed,
                    "text_bytes": f.text_bytes,
                })).collect::<Vec<_>>(),
                "fts_bytes": c.fts_bytes,
                "extracted": c.extracted,
                "failed": c.failed,
            })),
            "media": s.media.as_ref().map(|m| json!({
                "rows": m.rows,
                "read": m.read,
                "failed": m.failed,
                "queued": m.queued,
                "busy": m.busy,
            })),
            "memory": s.memory.as_ref().map(|m| json!({
                "rss_anon_bytes": m.rss_anon,
                "rss_file_bytes": m.rss_file,
                "search_snapshot_bytes": m.search_snapshot,
                "watch_bytes": m.watches,
                "sqlite_bytes": m.sqlite,
                "heap_in_use_bytes": m.heap_in_use,
                "heap_free_bytes": m.heap_free,
                // Freed heap the allocator keeps resident (fragmented
                // pages it cannot hand back): what lingers after a burst.
                "heap_free_resident_bytes": m.rss_anon.saturating_sub(m.heap_in_use),
            })),
            "watch": s.watch.as_ref().map(|w| json!({
                "enabled": w.enabled,
                "backend": w.backend,
                "watches": w.watches,
                "os_limit": w.os_limit,
                "polled": w.polled,
                "events": w.events,
                "overflows": w.overflows,
                "recrawls": w.recrawls,
                "last_event_ms": w.last_event_ms,
                "note": if w.note.is_empty() { None } else { Some(&w.note) },
            })),
        });
        if !organise.is_empty() {
            v["organise"] = json!(organise);
        }
        println!("{v}");
        return Ok(ExitCode::SUCCESS);
    }

    println!(
        "fsindexd {} (pid {}), up {} s: {}",
        s.version, s.pid, s.uptime_secs, s.state
    );
    println!(
        "index    {} entries, {} on disk ({})",
        count(s.entries),
        size(s.db_bytes),
        lossy(&s.db_path)
    );
    println!(
        "process  {} resident, CPU {:.1}% since the last status, {:.1} s in all",
        size(s.rss_bytes),
        s.cpu_percent,
        s.cpu_time_ms as f64 / 1000.0
    );
    if let Some(m) = s
        .memory
        .as_ref()
        .filter(|m| m.heap_in_use > 0 || m.search_snapshot > 0)
    {
        println!(
            "memory   {} name index, {} watches, {} SQLite; heap {} in use, {} free ({} of it still resident)",
            size(m.search_snapshot),
            size(m.watches),
            size(m.sqlite),
            size(m.heap_in_use),
            size(m.heap_free),
            size(m.rss_anon.saturating_sub(m.heap_in_use))
        );
    }
    if s.system {
        println!("mode     machine-wide: each user sees what they could open themselves");
    }
    if !s.listen.is_empty() {
        println!("listen   {} (bearer token required)", s.listen);
    }
    println!("written  {} entry rows since start", count(s.rows_written));
    if !s.persisted {
        println!(
            "disk     not yet persisted: {} row operations to write (search, du and ls answer; info, map and dupes wait for them)",
            count(s.pending_rows)
        );
    }
    for r in &s.roots {
        let progress = if state_name(r.state) == "scanning" {
            let priority = if r.priority.is_empty() {
                String::new()
            } else {
                format!(" (priority {})", r.priority)
            };
            format!(", {} walked{priority}", count(r.scanned))
        } else {
            String::new()
        };
        let errors = if r.errors > 0 {
            format!(", {} unreadable or vanished", count(r.errors))
        } else {
            String::new()
        };
        let error = if r.error.is_empty() {
            String::new()
        } else {
            format!(": {}", r.error)
        };
        println!(
            "root     {}  {}, watch {}, hashing {}  {} entries{progress}{errors}{error}",
            lossy(&r.path),
            state_name(r.state),
            r.watch,
            r.hashing,
            count(r.entries)
        );
    }
    if let Some(w) = s.watch.as_ref().filter(|w| w.enabled) {
        let since = if w.last_event_ms > 0 {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0);
            format!(
                ", last event {:.1} s ago",
                (now - w.last_event_ms).max(0) as f64 / 1000.0
            )
        } else {
            String::new()
        };
        println!(
            "watch    {} folders watched by {} (OS limit {}), {} polled; {} events, {} lost-event rescans{since}",
            count(w.watches),
            w.backend,
            count(w.os_limit),
            count(w.polled),
            count(w.events),
            count(w.recrawls)
        );
        if !w.note.is_empty() {
            println!("watch    {}", w.note);
        }
    } else {
        println!("watch    off: the index changes only on rescans");
    }
    if let Some(h) = &s.hashing {
        let last = if h.last_pass_secs_ago >= 0 {
            let covered = h.last_pass_candidates - h.last_pass_read.min(h.last_pass_candidates);
            format!(
                "; last {} {} s ago: {} of {} same-size files already hashed ({:.0}%), {} read{}",
                if h.last_pass_background {
                    "background pass"
                } else {
                    "dupes"
                },
                h.last_pass_secs_ago,
                count(covered),
                count(h.last_pass_candidates),
                covered as f64 * 100.0 / h.last_pass_candidates.max(1) as f64,
                count(h.last_pass_read),
                if h.last_pass_unreadable > 0 {
                    format!(", {} unreadable", count(h.last_pass_unreadable))
                } else {
                    String::new()
                }
            )
        } else {
            String::new()
        };
        println!(
            "hashes   {} files cached; {} files ({}) read since start{last}",
            count(h.cached),
            count(h.files_read),
            size(h.bytes_read),
        );
    }
    if let Some(f) = &s.fleet {
        let link = if f.connected {
            format!(
                "connected, {}; {} batches behind ({:.1} s)",
                f.state, f.lag_batches, f.lag_secs
            )
        } else {
            format!(
                "not connected ({}); {} batches waiting ({:.1} s)",
                if f.last_error.is_empty() {
                    &f.state
                } else {
                    &f.last_error
                },
                f.lag_batches,
                f.lag_secs
            )
        };
        println!("fleet    {} -> {}: {link}", f.host, f.database);
    }
    if let Some(c) = &s.content {
        for f in &c.folders {
            let mut failed: Vec<String> = f
                .failed
                .iter()
                .map(|(reason, n)| format!("{} {reason}", count(*n)))
                .collect();
            failed.sort();
            println!(
                "content  {}: {} files indexed ({} of text), {} queued{}",
                lossy(&f.path),
                count(f.indexed),
                size(f.text_bytes),
                count(f.queued),
                if failed.is_empty() {
                    String::new()
                } else {
                    format!(", not read: {}", failed.join(", "))
                }
            );
        }
        if !c.folders.is_empty() {
            println!(
                "content  full-text index {}; {} files read since start",
                size(c.fts_bytes),
                count(c.extracted)
            );
        }
    }
    if let Some(m) = &s.media
        && (!m.rows.is_empty() || m.queued > 0)
    {
        let ok = m.rows.get("ok").copied().unwrap_or(0);
        let mut failed: Vec<String> = m
            .rows
            .iter()
            .filter(|(reason, _)| *reason != "ok")
            .map(|(reason, n)| format!("{} {reason}", count(*n)))
            .collect();
        failed.sort();
        println!(
            "media    {} files with metadata, {} queued{}; {} files read since start",
            count(ok),
            count(m.queued),
            if failed.is_empty() {
                String::new()
            } else {
                format!(", not read: {}", failed.join(", "))
            },
            count(m.read)
        );
    }
    for n in &s.notices {
        println!("notice   {n}");
    }
    for line in &organise {
        println!("organise {line}");
    }
    Ok(ExitCode::SUCCESS)
}
