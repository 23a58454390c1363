//! systemd units: `~/.config/systemd/user/fsindexd.service` (or
//! `$XDG_CONFIG_HOME/systemd/user`) and `/etc/systemd/system/fsindexd.service`.

#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::{Report, Service, query_tool, run_tool};

pub const UNIT: &str = "fsindexd.service";

const USER_TEMPLATE: &str = include_str!("../../../../../packaging/systemd/user/fsindexd.service");
const SYSTEM_TEMPLATE: &str =
    include_str!("../../../../../packaging/systemd/system/fsindexd.service");
/// Where the templates (as the Debian package installs them) name the daemon.
const TEMPLATE_EXE: &str = "/usr/bin/fsindexd";

/// Where systemd marks the booted system (sd_booted(3)).
const BOOTED: &str = "/run/systemd/system";

/// The folder for our unit on the live system.
pub fn unit_dir(system: bool) -> anyhow::Result<PathBuf> {
    if system {
        return Ok(PathBuf::from("/etc/systemd/system"));
    }
    let base = directories::BaseDirs::new()
        .context("no home directory: cannot place a systemd user unit")?;
    Ok(base.config_dir().join("systemd/user"))
}

/// Where a packaged unit of the same name would be.
fn packaged_unit(system: bool) -> &'static str {
    if system {
        "/usr/lib/systemd/system/fsindexd.service"
    } else {
        "/usr/lib/systemd/user/fsindexd.service"
    }
}

/// The unit for the fsindexd at `exe`: the packaged template with its
/// ExecStart pointed there.
pub fn render(system: bool, exe: &Path) -> anyhow::Result<String> {
    let template = if system {
        SYSTEM_TEMPLATE
    } else {
        USER_TEMPLATE
    };
    let exe = quote(exe)?;
    let mut found = 0;
    let mut out = String::with_capacity(template.len() + exe.len());
    for line in template.lines() {
        match line
            .strip_prefix("ExecStart=")
            .and_then(|rest| rest.strip_prefix(TEMPLATE_EXE))
        {
            Some(args) => {
                found += 1;
                out.push_str("ExecStart=");
                out.push_str(&exe);
                out.push_str(args);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    if found != 1 {
        bail!("the unit template has {found} ExecStart={TEMPLATE_EXE} lines, expected one");
    }
    Ok(out)
}

/// The executable's path as ExecStart's first word: `%` doubled (it starts
/// a specifier), quoted when it holds spaces. Paths systemd would read
/// differently (`$`, quotes, backslashes, control characters) are refused.
fn quote(exe: &Path) -> anyhow::Result<String> {
    let s = exe
        .to_str()
        .with_context(|| format!("{} is not UTF-8: systemd cannot run it", exe.display()))?;
    if s.chars()
        .any(|c| matches!(c, '$' | '"' | '\'' | '\\') || c.is_control())
    {
        bail!(
            "{s}: a path with $, quotes, backslashes or control characters cannot go into a systemd unit; install fsindexd elsewhere"
        );
    }
    let s = s.replace('%', "%%");
    Ok(if s.contains(char::is_whitespace) {
        format!("\"{s}\"")
    } else {
        s
    })
}

/// `ExecStart=`'s value in a unit's text.
fn exec_start(text: &str) -> Option<&str> {
    text.lines().find_map(|l| l.strip_prefix("ExecStart="))
}

fn booted() -> bool {
    Path::new(BOOTED).is_dir()
}

fn ctl_args<'a>(svc: &Service, args: &[&'a str]) -> Vec<&'a str> {
    let mut v = Vec::with_capacity(args.len() + 1);
    if !svc.system {
        v.push("--user");
    }
    v.extend_from_slice(args);
    v
}

fn systemctl(svc: &Service, args: &[&str], report: &mut Report) -> anyhow::Result<()> {
    run_tool("systemctl", &ctl_args(svc, args), report).map_err(|e| {
        let journal = if svc.system {
            "journalctl -u fsindexd"
        } else {
            "journalctl --user -u fsindexd"
        };
        e.context(format!("see `{journal}` for the daemon's side"))
    })
}

/// `systemctl is-enabled|is-active`'s answer (`enabled`, `active`,
/// `failed`, ...).
fn state(svc: &Service, query: &str) -> Option<String> {
    query_tool("systemctl", &ctl_args(svc, &[query, UNIT]))
        .map(|(_, out)| out)
        .filter(|s| !s.is_empty())
}

/// After the unit file is written: reload, enable and start it. Returns
/// whether systemd runs here.
pub fn install(svc: &Service, changed: bool, report: &mut Report) -> anyhow::Result<bool> {
    if !booted() {
        let how = if svc.system {
            "`fsindexd --system` as root"
        } else {
            "`fsindexd` (any fsctl command also starts it)"
        };
        report.say(format!(
            "systemd is not running (no {BOOTED}): the unit is installed but not enabled or started; start the daemon with {how}"
        ));
        return Ok(false);
    }
    if changed {
        systemctl(svc, &["daemon-reload"], report)?;
    }
    let enabled = state(svc, "is-enabled").as_deref() == Some("enabled");
    let active = state(svc, "is-active").as_deref() == Some("active");
    if !enabled || !active {
        systemctl(svc, &["enable", "--now", UNIT], report)?;
    }
    if active && changed {
        systemctl(svc, &["restart", UNIT], report)?;
    }
    if enabled && active && !changed {
        report.say(format!("{UNIT} is enabled and active"));
    }
    Ok(true)
}

/// Before the unit file is removed: stop and disable it.
pub fn stop(svc: &Service, report: &mut Report) -> anyhow::Result<()> {
    if booted() {
        systemctl(svc, &["disable", "--now", UNIT], report)?;
    }
    Ok(())
}

/// The `WantedBy=` link `enable` creates beside the unit.
fn wants_link(svc: &Service) -> PathBuf {
    let target = if svc.system {
        "multi-user.target.wants"
    } else {
        "default.target.wants"
    };
    svc.path()
        .parent()
        .unwrap_or(Path::new(""))
        .join(target)
        .join(UNIT)
}

/// After the unit file is removed: let systemd forget it, or, where systemd
/// does not run, drop an enablement link left from `systemctl enable`.
pub fn after_remove(svc: &Service, removed: bool, report: &mut Report) -> anyhow::Result<()> {
    if svc.live() && booted() {
        if removed {
            systemctl(svc, &["daemon-reload"], report)?;
        }
        return Ok(());
    }
    let link = wants_link(svc);
    if link.symlink_metadata().is_ok() {
        std::fs::remove_file(&link).with_context(|| format!("removing {}", link.display()))?;
        report.say(format!("removed {}", link.display()));
    }
    if svc.live() && removed {
        report.say(format!(
            "systemd is not running (no {BOOTED}): nothing to stop"
        ));
    }
    Ok(())
}

pub fn status(svc: &Service, text: Option<&str>) -> anyhow::Result<Value> {
    let live = svc.live() && booted();
    let (enabled, active, active_state) = if live {
        let enabled = state(svc, "is-enabled");
        let active = state(svc, "is-active");
        (
            Some(enabled.as_deref() == Some("enabled")),
            Some(active.as_deref() == Some("active")),
            active,
        )
    } else {
        (
            Some(text.is_some() && wants_link(svc).symlink_metadata().is_ok()),
            None,
            None,
        )
    };
    let packaged = super::under(svc.prefix.as_deref(), Path::new(packaged_unit(svc.system)));
    Ok(json!({
        "exec": text.and_then(exec_start),
        "manager_running": live,
        "manager_note": if live {
            None
        } else if svc.live() {
            Some(format!("no {BOOTED}"))
        } else {
            Some(format!("{} is set: not asked", super::ROOT_ENV))
        },
        "enabled": enabled,
        "active": active,
        "active_state": active_state,
        "packaged_unit": packaged.is_file().then(|| packaged.display().to_string()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_points_exec_start_at_the_daemon_and_keeps_the_rest() {
        for system in [false, true] {
            let unit = render(system, Path::new("/opt/fs index/bin/fsindexd")).unwrap();
            let template = if system {
                SYSTEM_TEMPLATE
            } else {
                USER_TEMPLATE
            };
            let want = if system {
                "\"/opt/fs index/bin/fsindexd\" --system"
            } else {
                "\"/opt/fs index/bin/fsindexd\""
            };
            assert_eq!(exec_start(&unit), Some(want));
            assert_eq!(unit.lines().count(), template.lines().count());
            for (a, b) in unit.lines().zip(template.lines()) {
                assert!(a == b || a.starts_with("ExecStart="), "{a} / {b}");
            }
            assert!(unit.contains("Type=notify\n") && unit.contains("WatchdogSec="));
        }
    }

    #[test]
    fn quote_escapes_specifiers_and_refuses_what_systemd_would_mangle() {
        assert_eq!(
            quote(Path::new("/usr/bin/fsindexd")).unwrap(),
            "/usr/bin/fsindexd"
        );
        assert_eq!(
            quote(Path::new("/opt/100%/fsindexd")).unwrap(),
            "/opt/100%%/fsindexd"
        );
        for bad in [
            "/opt/$HOME/fsindexd",
            "/opt/a\"b/fsindexd",
            "/opt/a\\b",
            "/opt/a\nb",
        ] {
            assert!(quote(Path::new(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_system_unit_runs_system_mode_with_its_directories() {
        for needle in [
            "ExecStart=/usr/bin/fsindexd --system\n",
            "StateDirectory=fsindex\n",
            "RuntimeDirectory=fsindex\n",
            "LogsDirectory=fsindex\n",
            "ProtectSystem=strict\n",
            "ProtectHome=read-only\n",
            "PrivateTmp=yes\n",
            "NoNewPrivileges=yes\n",
            "IOSchedulingClass=idle\n",
            "Restart=on-failure\n",
        ] {
            assert!(SYSTEM_TEMPLATE.contains(needle), "{needle}");
        }
        assert!(USER_TEMPLATE.contains("ExecStart=/usr/bin/fsindexd\n"));
        assert!(USER_TEMPLATE.contains("WantedBy=default.target\n"));
    }
}
