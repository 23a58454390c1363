//! `fsctl service install|uninstall|status [--system]`: run fsindexd as a
//! service of the platform's manager (systemd on Linux, launchd on macOS,
//! the Service Control Manager on Windows).
//!
//! The service definitions are the files in `packaging/` (one source for
//! the Debian package and this command); `install` only points their
//! program path at the fsindexd it finds (beside fsctl, then on PATH).
//! Every action is reported as one line, and each command is idempotent: a
//! second `install` finds the definition unchanged and the service running.
//!
//! `FSINDEX_SERVICE_ROOT=DIR` (for tests and packagers) writes and removes
//! unit files under DIR as if it were `/`, and never contacts the service
//! manager.

mod launchd;
mod scm;
mod systemd;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::global::Global;

/// Root prefix for unit files; the service manager is left alone.
pub const ROOT_ENV: &str = "FSINDEX_SERVICE_ROOT";

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Write the service definition for this platform and start the service
    /// (systemd: enable --now); says what it did, one line per action.
    Install(Scope),
    /// Stop the service and remove its definition.
    Uninstall(Scope),
    /// Whether the service is installed, enabled and running, and where its
    /// definition is.
    Status(Scope),
}

#[derive(Debug, clap::Args)]
struct Scope {
    /// The machine-wide service (`fsindexd --system`, run as root) instead
    /// of the per-user one.
    #[arg(long)]
    system: bool,
}

/// Which service manager runs the daemon here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Manager {
    Systemd,
    Launchd,
    Scm,
}

impl Manager {
    fn current() -> anyhow::Result<Manager> {
        if cfg!(target_os = "linux") {
            Ok(Manager::Systemd)
        } else if cfg!(target_os = "macos") {
            Ok(Manager::Launchd)
        } else if cfg!(windows) {
            Ok(Manager::Scm)
        } else {
            bail!(
                "no supported service manager on {} (systemd, launchd and Windows are); start fsindexd from your init system",
                std::env::consts::OS
            )
        }
    }

    fn name(self) -> &'static str {
        match self {
            Manager::Systemd => "systemd",
            Manager::Launchd => "launchd",
            Manager::Scm => "windows-scm",
        }
    }
}

/// The service being managed: which manager, which scope, where its
/// definition lives.
#[derive(Debug)]
pub struct Service {
    pub manager: Manager,
    pub system: bool,
    /// The definition file (none for the Windows SCM, which keeps it in the
    /// registry), with `FSINDEX_SERVICE_ROOT` applied.
    pub path: Option<PathBuf>,
    /// `FSINDEX_SERVICE_ROOT`, when set.
    pub prefix: Option<PathBuf>,
}

impl Service {
    fn new(system: bool) -> anyhow::Result<Service> {
        let manager = Manager::current()?;
        let prefix = std::env::var_os(ROOT_ENV)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from);
        let path = match manager {
            Manager::Systemd => Some(systemd::unit_dir(system)?.join(systemd::UNIT)),
            Manager::Launchd => Some(launchd::plist_path(system)?),
            Manager::Scm => {
                if prefix.is_some() {
                    bail!(
                        "{ROOT_ENV} applies to unit files; a Windows service is registered with the service manager"
                    );
                }
                None
            }
        };
        let path = path.map(|p| under(prefix.as_deref(), &p));
        Ok(Service {
            manager,
            system,
            path,
            prefix,
        })
    }

    fn scope(&self) -> &'static str {
        if self.system { "system" } else { "user" }
    }

    /// Whether commands may reach the live service manager.
    fn live(&self) -> bool {
        self.prefix.is_none()
    }

    fn path(&self) -> &Path {
        self.path.as_deref().unwrap_or(Path::new(""))
    }

    /// The definition to install, for the fsindexd at `exe`.
    fn render(&self, exe: &Path) -> anyhow::Result<String> {
        match self.manager {
            Manager::Systemd => systemd::render(self.system, exe),
            Manager::Launchd => launchd::render(self.system, exe),
            Manager::Scm => Ok(scm::command_line(exe)),
        }
    }
}

/// `path` inside `prefix` (like DESTDIR), or `path` itself.
pub fn under(prefix: Option<&Path>, path: &Path) -> PathBuf {
    match prefix {
        Some(root) => {
            let rel: PathBuf = path
                .components()
                .filter(|c| matches!(c, std::path::Component::Normal(_)))
                .collect();
            root.join(rel)
        }
        None => path.to_owned(),
    }
}

/// Lines saying what was done: printed as they happen, or gathered for
/// `--json`.
pub struct Report {
    json: bool,
    lines: Vec<String>,
}

impl Report {
    pub fn say(&mut self, line: impl Into<String>) {
        let line = line.into();
        if !self.json {
            println!("{line}");
        }
        self.lines.push(line);
    }
}

pub async fn run(g: &Global, a: &Args) -> anyhow::Result<ExitCode> {
    let mut report = Report {
        json: g.json,
        lines: Vec::new(),
    };
    let (action, system) = match &a.action {
        Action::Install(s) => ("install", s.system),
        Action::Uninstall(s) => ("uninstall", s.system),
        Action::Status(s) => ("status", s.system),
    };
    let svc = Service::new(system)?;
    let mut out = json!({
        "action": action,
        "manager": svc.manager.name(),
        "scope": svc.scope(),
        "unit": svc.path.as_ref().map(|p| p.display().to_string()),
    });
    let details = match action {
        "install" => install(&svc, &mut report)?,
        "uninstall" => uninstall(&svc, &mut report)?,
        _ => {
            let st = status(&svc)?;
            if !g.json {
                print_status(&svc, &st);
            }
            st
        }
    };
    if g.json {
        merge(&mut out, details);
        if action != "status" {
            out["steps"] = json!(report.lines);
        }
        println!("{out}");
    }
    Ok(ExitCode::SUCCESS)
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(into), Value::Object(from)) = (into.as_object_mut(), from) {
        into.extend(from);
    }
}

/// The fsindexd the service should run: beside fsctl, then on PATH.
fn daemon_exe() -> anyhow::Result<PathBuf> {
    let exe = fsindex_client::find_daemon().context(
        "fsindexd was not found beside fsctl or on PATH; install it first (the service runs it)",
    )?;
    Ok(std::path::absolute(&exe)?)
}

fn install(svc: &Service, report: &mut Report) -> anyhow::Result<Value> {
    let exe = daemon_exe()?;
    let text = svc.render(&exe)?;
    if std::env::var_os("FSINDEX_HOME").is_some_and(|h| !h.is_empty()) {
        report.say(
            "note: FSINDEX_HOME is set here, but the service runs fsindexd's default instance",
        );
    }
    let changed = match svc.manager {
        Manager::Scm => None,
        _ => {
            let changed = write_if_changed(svc.path(), &text, svc.system)?;
            report.say(format!(
                "{} {}",
                if changed { "wrote" } else { "unchanged" },
                svc.path().display()
            ));
            Some(changed)
        }
    };
    if !svc.live() {
        report.say(format!(
            "{ROOT_ENV} is set: not contacting {}",
            svc.manager.name()
        ));
        return Ok(json!({"changed": changed, "exec": exe.display().to_string()}));
    }
    let running = match svc.manager {
        Manager::Systemd => systemd::install(svc, changed == Some(true), report)?,
        Manager::Launchd => launchd::install(svc, changed == Some(true), report)?,
        Manager::Scm => scm::install(svc, &text, report)?,
    };
    Ok(json!({
        "changed": changed,
        "exec": exe.display().to_string(),
        "manager_running": running,
    }))
}

fn uninstall(svc: &Service, report: &mut Report) -> anyhow::Result<Value> {
    if svc.manager == Manager::Scm {
        let removed = scm::uninstall(svc, report)?;
        return Ok(json!({ "removed": removed }));
    }
    let path = svc.path();
    let installed = path.exists();
    if svc.live() && installed {
        match svc.manager {
            Manager::Systemd => systemd::stop(svc, report)?,
            Manager::Launchd => launchd::stop(svc, report)?,
            Manager::Scm => {}
        }
    }
    if installed {
        std::fs::remove_file(path)
            .with_context(|| format!("removing {}{}", path.display(), root_hint(svc.system)))?;
        report.say(format!("removed {}", path.display()));
    } else {
        report.say(format!("not installed: no {}", path.display()));
    }
    if svc.manager == Manager::Systemd {
        systemd::after_remove(svc, installed, report)?;
    }
    Ok(json!({ "removed": installed }))
}

/// What `status` reports (also its JSON).
fn status(svc: &Service) -> anyhow::Result<Value> {
    let exe = daemon_exe().ok();
    if svc.manager == Manager::Scm {
        return scm::status(svc, exe.as_deref());
    }
    let path = svc.path();
    let text = std::fs::read_to_string(path).ok();
    let up_to_date = match (&text, &exe) {
        (Some(t), Some(exe)) => svc.render(exe).ok().map(|want| *t == want),
        _ => None,
    };
    let mut st = json!({
        "installed": text.is_some(),
        "up_to_date": up_to_date,
    });
    let more = match svc.manager {
        Manager::Systemd => systemd::status(svc, text.as_deref())?,
        Manager::Launchd => launchd::status(svc, text.as_deref())?,
        Manager::Scm => Value::Null,
    };
    merge(&mut st, more);
    Ok(st)
}

fn print_status(svc: &Service, st: &Value) {
    let yes_no = |v: &Value| match v.as_bool() {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    let installed = st["installed"].as_bool() == Some(true);
    let unit = match &svc.path {
        Some(p) => p.display().to_string(),
        None => format!("service {}", scm::NAME),
    };
    let state = if !installed {
        "not installed".to_string()
    } else {
        match st["up_to_date"].as_bool() {
            Some(true) => "installed, up to date".into(),
            Some(false) => "installed, differs from what `fsctl service install` writes now".into(),
            None => "installed".into(),
        }
    };
    println!("unit       {unit} ({state})");
    if let Some(exec) = st["exec"].as_str() {
        println!("runs       {exec}");
    }
    let manager = svc.manager.name();
    let note = st["manager_note"].as_str().unwrap_or("not running");
    match st["manager_running"].as_bool() {
        Some(false) => println!("manager    {manager}, not running ({note})"),
        _ => println!("manager    {manager}"),
    }
    println!("enabled    {}", yes_no(&st["enabled"]));
    let active = match (st["active"].as_bool(), st["active_state"].as_str()) {
        (_, Some(s)) => s.to_string(),
        (Some(a), None) => yes_no(&Value::Bool(a)).to_string(),
        (None, None) => format!("unknown ({manager}: {note})"),
    };
    println!("active     {active}");
    if let Some(p) = st["packaged_unit"].as_str() {
        println!("packaged   {p} (from the package; a unit above overrides it)");
    }
}

/// Writes `text` to `path` unless it already holds exactly that; returns
/// whether it wrote. Written to a temp file and renamed, mode 0644.
fn write_if_changed(path: &Path, text: &str, system: bool) -> anyhow::Result<bool> {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(false);
    }
    let dir = path.parent().context("unit path has no folder")?;
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(
            ".{}.fsctl-tmp",
            path.file_name().unwrap_or_default().to_string_lossy()
        ));
        std::fs::write(&tmp, text)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644))?;
        }
        std::fs::rename(&tmp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    };
    write().with_context(|| format!("writing {}{}", path.display(), root_hint(system)))?;
    Ok(true)
}

fn root_hint(system: bool) -> &'static str {
    if system {
        " (the machine-wide service needs an administrator: sudo fsctl service ... --system)"
    } else {
        ""
    }
}

/// Runs a service-manager command, reporting it as one line; a failure is
/// an error carrying the command's own message.
pub fn run_tool(program: &str, args: &[&str], report: &mut Report) -> anyhow::Result<()> {
    let shown = std::iter::once(program)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("running {shown}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let msg = String::from_utf8_lossy(&out.stdout);
        let why = if err.trim().is_empty() { msg } else { err };
        bail!("`{shown}` failed ({}): {}", out.status, why.trim());
    }
    report.say(format!("ran {shown}"));
    Ok(())
}

/// A query's trimmed stdout and whether it succeeded; `None` when the tool
/// could not run at all.
pub fn query_tool(program: &str, args: &[&str]) -> Option<(bool, String)> {
    let out = Command::new(program).args(args).output().ok()?;
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_a_prefix_paths_are_relative_to_it() {
        let p = Path::new("/etc/systemd/system/fsindexd.service");
        assert_eq!(under(None, p), p);
        assert_eq!(
            under(Some(Path::new("/tmp/root")), p),
            Path::new("/tmp/root/etc/systemd/system/fsindexd.service")
        );
    }

    #[test]
    fn write_if_changed_writes_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/fsindexd.service");
        assert!(write_if_changed(&path, "x\n", false).unwrap());
        assert!(!write_if_changed(&path, "x\n", false).unwrap());
        assert!(write_if_changed(&path, "y\n", false).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "y\n");
        // Nothing but the unit is left in its folder.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["fsindexd.service"]);
    }
}
