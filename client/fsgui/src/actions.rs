//! What the window does to files, away from egui: move to the trash (the
//! platform's, through the `trash` crate: the freedesktop trash spec on
//! Linux, with its `.trashinfo`, so a file manager can put it back), rename
//! in place, open (failures reported, not swallowed), open with a program
//! of the user's choice, and the query that searches one folder.
//!
//! Nothing here asks the user: the window asks before it calls what
//! destroys ([`trash`]); [`rename`] never replaces a file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::app::os_path;

/// Moves `paths` to the trash, all or (on the first failure) the ones
/// before it; says which failed and why.
pub fn trash(paths: &[Vec<u8>]) -> Result<(), String> {
    let list: Vec<PathBuf> = paths.iter().map(|p| os_path(p)).collect();
    trash::delete_all(&list).map_err(|e| format!("cannot move to the trash: {e}"))
}

/// Renames `path` to `new_name` in its folder; returns the new path. A
/// name that is empty, has a `/`, or is taken is refused (nothing is ever
/// replaced).
pub fn rename(path: &[u8], new_name: &str) -> Result<Vec<u8>, String> {
    let name = new_name.trim_end_matches(['\n', '\r']);
    if name.is_empty() || name == "." || name == ".." {
        return Err("give the new name".into());
    }
    if name.contains('/') || name.contains('\0') {
        return Err(format!("“{name}” has a / in it: a name, not a path"));
    }
    let from = os_path(path);
    let Some(dir) = from.parent() else {
        return Err("the root cannot be renamed".into());
    };
    let to = dir.join(name);
    if to == from {
        return Ok(path.to_vec());
    }
    if to.symlink_metadata().is_ok() {
        return Err(format!("“{name}” is already there"));
    }
    std::fs::rename(&from, &to).map_err(|e| format!("cannot rename: {e}"))?;
    Ok(bytes_of(&to))
}

fn bytes_of(p: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        p.to_string_lossy().into_owned().into_bytes()
    }
}

/// Opens `path` with the default application. On Linux and the BSDs this
/// runs `xdg-open` and waits a moment for its verdict: it exits at once
/// with an error when no application takes the file (opener does not look
/// at its status), and keeps running or exits 0 when one does.
pub fn open(path: &Path) -> Result<(), String> {
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        let child = Command::new("xdg-open")
            .arg(path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn();
        match child {
            Ok(child) => waited("xdg-open", child),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                opener::open(path).map_err(|e| e.to_string())
            }
            Err(e) => Err(format!("xdg-open: {e}")),
        }
    }
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    {
        opener::open(path).map_err(|e| e.to_string())
    }
}

/// Opens `paths` with `program` (a command line: the program and its
/// arguments, split at spaces), the paths appended. Fails visibly when the
/// program cannot be started or exits with an error at once.
pub fn open_with(program: &str, paths: &[Vec<u8>]) -> Result<(), String> {
    let mut words = program.split_whitespace();
    let Some(exe) = words.next() else {
        return Err("give a program".into());
    };
    let child = Command::new(exe)
        .args(words)
        .args(paths.iter().map(|p| os_path(p)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{exe}: {e}"))?;
    waited(exe, child)
}

/// A program just started: an error if it exits unsuccessfully within a
/// second and a half (with the last line it wrote), fine if it is still
/// running (an application opened) or exited 0. A child still running is
/// left to run, and reaped by a thread of its own.
fn waited(name: &str, mut child: std::process::Child) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_millis(1500);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                let last = err.lines().rev().find(|l| !l.trim().is_empty());
                return Err(match last {
                    Some(l) => format!("{name} failed ({status}): {}", l.trim()),
                    None => format!("{name} failed ({status})"),
                });
            }
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                std::thread::spawn(move || child.wait());
                return Ok(());
            }
            Err(e) => return Err(format!("{name}: {e}")),
        }
    }
}

/// The query that searches under `folder`.
pub fn search_in(folder: &[u8]) -> String {
    let f = String::from_utf8_lossy(folder);
    if f.contains([' ', '"', '|']) {
        format!("in:\"{}\" ", f.replace('"', "\\\""))
    } else {
        format!("in:{f} ")
    }
}

/// The folder of a path (a folder is its own).
pub fn folder_of(path: &[u8], is_folder: bool) -> Vec<u8> {
    if is_folder {
        return path.to_vec();
    }
    match path.iter().rposition(|&b| b == b'/') {
        Some(0) => b"/".to_vec(),
        Some(i) => path[..i].to_vec(),
        None => path.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_refuses_to_replace_and_paths() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.txt");
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(dir.path().join("b.txt"), b"b").unwrap();
        let p = bytes_of(&a);
        assert!(rename(&p, "b.txt").unwrap_err().contains("already there"));
        assert!(
            rename(&p, "x/y")
                .unwrap_err()
                .contains("a name, not a path")
        );
        assert!(rename(&p, "").is_err());
        let to = rename(&p, "c d.txt").unwrap();
        assert_eq!(to, bytes_of(&dir.path().join("c d.txt")));
        assert_eq!(std::fs::read(dir.path().join("c d.txt")).unwrap(), b"a");
        assert_eq!(std::fs::read(dir.path().join("b.txt")).unwrap(), b"b");
    }

    #[test]
    fn a_program_that_fails_at_once_is_an_error() {
        let e = open_with("false", &[b"/nonexistent".to_vec()]).unwrap_err();
        assert!(e.contains("false failed"), "{e}");
        assert!(open_with("no-such-program-here", &[]).is_err());
        assert!(open_with("true", &[]).is_ok());
    }

    #[test]
    fn folders_and_their_queries() {
        assert_eq!(folder_of(b"/a/b.txt", false), b"/a");
        assert_eq!(folder_of(b"/a", true), b"/a");
        assert_eq!(folder_of(b"/etc", false), b"/");
        assert_eq!(search_in(b"/a/b"), "in:/a/b ");
        assert_eq!(search_in(b"/my docs"), "in:\"/my docs\" ");
    }
}
