//! The Windows service `fsindexd`, registered with the Service Control
//! Manager through `sc.exe` (present on every Windows). Services there are
//! machine-wide, so only `--system` is offered; the daemon runs as
//! `fsindexd.exe --system --service` (see packaging/windows/README.md).

#![cfg_attr(not(windows), allow(dead_code))]

use std::path::Path;

use anyhow::bail;
use serde_json::{Value, json};

use super::{Report, Service, query_tool, run_tool};

pub const NAME: &str = "fsindexd";
const DISPLAY_NAME: &str = "fsindex file index daemon";
const DESCRIPTION: &str = "Keeps the fsindex file index current and answers its queries.";
const SC: &str = "sc.exe";

/// The command line the SCM runs.
pub fn command_line(exe: &Path) -> String {
    format!("\"{}\" --system --service", exe.display())
}

fn require_system(svc: &Service) -> anyhow::Result<()> {
    if !svc.system {
        bail!(
            "a Windows service is machine-wide: use `fsctl service install --system` from an administrator prompt (for a per-user daemon, any fsctl command starts fsindexd)"
        );
    }
    Ok(())
}

/// What `sc.exe qc` and `sc.exe query` say about the service; `None` when
/// it is not registered.
struct Registered {
    command_line: String,
    start_type: String,
    state: String,
}

fn registered() -> Option<Registered> {
    let (ok, qc) = query_tool(SC, &["qc", NAME])?;
    if !ok {
        return None;
    }
    let query = query_tool(SC, &["query", NAME])
        .map(|(_, out)| out)
        .unwrap_or_default();
    Some(Registered {
        command_line: field(&qc, "BINARY_PATH_NAME").unwrap_or_default(),
        start_type: field(&qc, "START_TYPE").unwrap_or_default(),
        state: field(&query, "STATE").unwrap_or_default(),
    })
}

/// `KEY : VALUE` in sc.exe's output; for numbered values (`4  RUNNING`) the
/// name.
fn field(out: &str, key: &str) -> Option<String> {
    out.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        let v = v.trim();
        Some(match v.split_once(char::is_whitespace) {
            Some((n, name)) if n.chars().all(|c| c.is_ascii_digit()) => name.trim().to_string(),
            _ => v.to_string(),
        })
    })
}

pub fn install(svc: &Service, want: &str, report: &mut Report) -> anyhow::Result<bool> {
    require_system(svc)?;
    let before = registered();
    match &before {
        None => {
            run_tool(
                SC,
                &[
                    "create",
                    NAME,
                    "binPath=",
                    want,
                    "start=",
                    "auto",
                    "DisplayName=",
                    DISPLAY_NAME,
                ],
                report,
            )?;
            run_tool(SC, &["description", NAME, DESCRIPTION], report)?;
        }
        Some(r) if r.command_line != want || r.start_type != "AUTO_START" => {
            run_tool(
                SC,
                &["config", NAME, "binPath=", want, "start=", "auto"],
                report,
            )?;
            if r.state == "RUNNING" {
                report.say(format!(
                    "the running service still uses the old command; restart it: sc.exe stop {NAME} && sc.exe start {NAME}"
                ));
            }
        }
        Some(_) => report.say(format!("service {NAME} is registered, unchanged")),
    }
    match registered() {
        Some(r) if r.state == "RUNNING" || r.state == "START_PENDING" => {
            report.say(format!("service {NAME} is {}", r.state.to_lowercase()));
        }
        _ => run_tool(SC, &["start", NAME], report)?,
    }
    Ok(true)
}

pub fn uninstall(svc: &Service, report: &mut Report) -> anyhow::Result<bool> {
    require_system(svc)?;
    let Some(r) = registered() else {
        report.say(format!("not installed: no service {NAME}"));
        return Ok(false);
    };
    if r.state != "STOPPED" {
        run_tool(SC, &["stop", NAME], report)?;
    }
    run_tool(SC, &["delete", NAME], report)?;
    Ok(true)
}

pub fn status(svc: &Service, exe: Option<&Path>) -> anyhow::Result<Value> {
    require_system(svc)?;
    let r = registered();
    Ok(json!({
        "installed": r.is_some(),
        "up_to_date": match (&r, exe) {
            (Some(r), Some(exe)) => Some(r.command_line == command_line(exe)),
            _ => None,
        },
        "exec": r.as_ref().map(|r| r.command_line.clone()),
        "manager_running": true,
        "enabled": r.as_ref().map(|r| r.start_type == "AUTO_START"),
        "active": r.as_ref().map(|r| r.state == "RUNNING"),
        "active_state": r.as_ref().map(|r| r.state.to_lowercase()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sc_output_is_read() {
        let qc = "[SC] QueryServiceConfig SUCCESS\r\n\r\nSERVICE_NAME: fsindexd\r\n        TYPE               : 10  WIN32_OWN_PROCESS\r\n        START_TYPE         : 2   AUTO_START\r\n        BINARY_PATH_NAME   : \"C:\\Program Files\\fsindex\\fsindexd.exe\" --system --service\r\n";
        assert_eq!(field(qc, "START_TYPE").as_deref(), Some("AUTO_START"));
        assert_eq!(
            field(qc, "BINARY_PATH_NAME").as_deref(),
            Some("\"C:\\Program Files\\fsindex\\fsindexd.exe\" --system --service")
        );
        let query = "SERVICE_NAME: fsindexd\r\n        STATE              : 4  RUNNING\r\n                                (STOPPABLE, NOT_PAUSABLE, ACCEPTS_SHUTDOWN)\r\n";
        assert_eq!(field(query, "STATE").as_deref(), Some("RUNNING"));
        assert_eq!(field(query, "WIN32_EXIT_CODE"), None);
    }

    #[test]
    fn command_line_quotes_the_program() {
        assert_eq!(
            command_line(Path::new("C:/Program Files/fsindex/fsindexd.exe")),
            "\"C:/Program Files/fsindex/fsindexd.exe\" --system --service"
        );
    }
}
