//! launchd jobs: `~/Library/LaunchAgents/org.fsindex.fsindexd.plist` (the
//! user's `gui/UID` domain) and `/Library/LaunchDaemons/...` (`system`).

#![cfg_attr(not(target_os = "macos"), allow(dead_code))]

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::{Report, Service, query_tool, run_tool};

pub const LABEL: &str = "org.fsindex.fsindexd";

const AGENT_TEMPLATE: &str =
    include_str!("../../../../../packaging/launchd/org.fsindex.fsindexd.plist");
const DAEMON_TEMPLATE: &str =
    include_str!("../../../../../packaging/launchd/org.fsindex.fsindexd.system.plist");
/// Where the templates name the daemon.
const TEMPLATE_EXE: &str = "<string>/usr/local/bin/fsindexd</string>";

pub fn plist_path(system: bool) -> anyhow::Result<PathBuf> {
    let name = format!("{LABEL}.plist");
    if system {
        return Ok(Path::new("/Library/LaunchDaemons").join(name));
    }
    let base =
        directories::BaseDirs::new().context("no home directory: cannot place a LaunchAgent")?;
    Ok(base.home_dir().join("Library/LaunchAgents").join(name))
}

/// The job for the fsindexd at `exe`: the template with its program path
/// pointed there.
pub fn render(system: bool, exe: &Path) -> anyhow::Result<String> {
    let template = if system {
        DAEMON_TEMPLATE
    } else {
        AGENT_TEMPLATE
    };
    let exe = exe
        .to_str()
        .with_context(|| format!("{} is not UTF-8", exe.display()))?;
    if template.matches(TEMPLATE_EXE).count() != 1 {
        bail!("the launchd template must name {TEMPLATE_EXE} once");
    }
    Ok(template.replace(
        TEMPLATE_EXE,
        &format!("<string>{}</string>", xml_escape(exe)),
    ))
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `gui/UID` for an agent, `system` for a daemon.
fn domain(svc: &Service) -> anyhow::Result<String> {
    if svc.system {
        return Ok("system".into());
    }
    let (ok, uid) = query_tool("id", &["-u"]).context("running id -u")?;
    if !ok || uid.is_empty() {
        bail!("`id -u` did not give a user id");
    }
    Ok(format!("gui/{uid}"))
}

fn target(svc: &Service) -> anyhow::Result<String> {
    Ok(format!("{}/{LABEL}", domain(svc)?))
}

/// `launchctl print`: the job's description when it is loaded.
fn print(svc: &Service) -> anyhow::Result<Option<String>> {
    Ok(query_tool("launchctl", &["print", &target(svc)?]).and_then(|(ok, out)| ok.then_some(out)))
}

/// After the plist is written: (re)load the job; RunAtLoad starts it.
pub fn install(svc: &Service, changed: bool, report: &mut Report) -> anyhow::Result<bool> {
    let target = target(svc)?;
    let loaded = print(svc)?.is_some();
    if loaded && !changed {
        report.say(format!("{target} is loaded"));
        return Ok(true);
    }
    if loaded {
        run_tool("launchctl", &["bootout", &target], report)?;
    }
    run_tool("launchctl", &["enable", &target], report)?;
    let path = svc.path().display().to_string();
    run_tool("launchctl", &["bootstrap", &domain(svc)?, &path], report)?;
    Ok(true)
}

/// Before the plist is removed: unload the job (which stops it).
pub fn stop(svc: &Service, report: &mut Report) -> anyhow::Result<()> {
    if print(svc)?.is_some() {
        run_tool("launchctl", &["bootout", &target(svc)?], report)?;
    }
    Ok(())
}

pub fn status(svc: &Service, text: Option<&str>) -> anyhow::Result<Value> {
    let exec = text.and_then(|t| {
        let start = t.find("<key>ProgramArguments</key>")?;
        let rest = &t[start..];
        let s = rest.find("<string>")? + "<string>".len();
        let e = rest[s..].find("</string>")?;
        Some(rest[s..s + e].to_string())
    });
    if !svc.live() {
        return Ok(json!({
            "exec": exec,
            "manager_running": false,
            "manager_note": format!("{} is set: not asked", super::ROOT_ENV),
            "enabled": Value::Null,
            "active": Value::Null,
        }));
    }
    let printed = print(svc)?;
    let disabled = query_tool("launchctl", &["print-disabled", &domain(svc)?])
        .map(|(_, out)| is_disabled(&out))
        .unwrap_or(false);
    let state = printed.as_deref().and_then(job_state);
    Ok(json!({
        "exec": exec,
        "manager_running": true,
        "loaded": printed.is_some(),
        "enabled": text.is_some() && !disabled,
        "active": state.as_deref() == Some("running"),
        "active_state": state.or_else(|| printed.is_none().then(|| "not loaded".to_string())),
    }))
}

/// `state = running` in `launchctl print`'s output.
fn job_state(printed: &str) -> Option<String> {
    printed
        .lines()
        .find_map(|l| l.trim().strip_prefix("state = "))
        .map(str::to_string)
}

/// `"org.fsindex.fsindexd" => disabled` (or `=> true` on older macOS) in
/// `launchctl print-disabled`'s output.
fn is_disabled(out: &str) -> bool {
    out.lines().any(|l| {
        let l = l.trim();
        l.starts_with(&format!("\"{LABEL}\""))
            && (l.ends_with("=> disabled") || l.ends_with("=> true"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_points_the_program_at_the_daemon() {
        let agent = render(false, Path::new("/Users/me/bin/fs&index/fsindexd")).unwrap();
        assert!(agent.contains(
            "<array>\n\t\t<string>/Users/me/bin/fs&amp;index/fsindexd</string>\n\t</array>"
        ));
        assert!(!agent.contains("/usr/local/bin/fsindexd"));
        let daemon = render(true, Path::new("/opt/fsindexd")).unwrap();
        assert!(daemon.contains("<string>/opt/fsindexd</string>\n\t\t<string>--system</string>"));
        for plist in [&agent, &daemon] {
            assert!(plist.contains(&format!("<string>{LABEL}</string>")));
            assert!(plist.trim_end().ends_with("</plist>"));
        }
    }

    #[test]
    fn launchctl_output_is_read() {
        let printed = "gui/501/org.fsindex.fsindexd = {\n\tactive count = 1\n\tstate = running\n}";
        assert_eq!(job_state(printed).as_deref(), Some("running"));
        assert!(is_disabled(
            "disabled services = {\n\t\"org.fsindex.fsindexd\" => disabled\n}"
        ));
        assert!(is_disabled("\t\"org.fsindex.fsindexd\" => true"));
        assert!(!is_disabled("\t\"org.fsindex.fsindexd\" => enabled"));
        assert!(!is_disabled("\t\"org.other\" => disabled"));
    }
}
