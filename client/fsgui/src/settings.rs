//! Search history and saved searches, kept in `fsgui.toml` in the
//! instance's config directory (beside the daemon's `config.toml`, or under
//! `FSINDEX_HOME`). A file that cannot be read or parsed is ignored (and
//! replaced on the next save): losing a history is no reason not to start.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Queries kept in the history, newest first.
pub const HISTORY_KEPT: usize = 50;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Recent queries, newest first, without repeats.
    pub history: Vec<String>,
    /// Queries saved by the user, in the order saved.
    pub saved: Vec<String>,
    /// Programs files were opened with ("Open with…"), newest first.
    pub open_with: Vec<String>,
    /// "light" or "dark" once chosen with the toggle; unset: egui's default
    /// (the system's, where the platform reports one).
    pub theme: Option<String>,
    /// Whether queries match accents (`accents:ignore` unless set): unset
    /// is Everything's default, `cafe` finding `café`.
    pub match_accents: Option<bool>,
}

impl Settings {
    /// `$FSINDEX_HOME/fsgui.toml`, or the per-user config directory's.
    pub fn default_path() -> PathBuf {
        if let Some(home) = std::env::var_os("FSINDEX_HOME").filter(|h| !h.is_empty()) {
            return Path::new(&home).join("fsgui.toml");
        }
        match directories::ProjectDirs::from("", "", "fsindex") {
            Some(d) => d.config_dir().join("fsgui.toml"),
            None => Path::new(".fsindex").join("fsgui.toml"),
        }
    }

    pub fn load(path: &Path) -> Settings {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| toml::from_str(&s).ok())
            .unwrap_or_default()
    }

    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = toml::to_string(self).map_err(std::io::Error::other)?;
        // Write then rename: a crash never leaves half a file.
        let tmp = path.with_extension("toml.tmp");
        std::fs::write(&tmp, text)?;
        std::fs::rename(tmp, path)
    }

    /// Puts a program at the top of the "Open with…" list. Returns whether
    /// it changed.
    pub fn remember_program(&mut self, program: &str) -> bool {
        if self.open_with.first().is_some_and(|p| p == program) {
            return false;
        }
        self.open_with.retain(|p| p != program);
        self.open_with.insert(0, program.to_owned());
        self.open_with.truncate(10);
        true
    }

    /// Puts a query at the top of the history. Returns whether it changed.
    pub fn remember(&mut self, query: &str) -> bool {
        let q = query.trim();
        if q.is_empty() || self.history.first().is_some_and(|h| h == q) {
            return false;
        }
        self.history.retain(|h| h != q);
        self.history.insert(0, q.to_owned());
        self.history.truncate(HISTORY_KEPT);
        true
    }

    /// Saves a query, or forgets it if it was saved. Returns whether it is
    /// saved now.
    pub fn toggle_saved(&mut self, query: &str) -> bool {
        let q = query.trim();
        if let Some(at) = self.saved.iter().position(|s| s == q) {
            self.saved.remove(at);
            return false;
        }
        if q.is_empty() {
            return false;
        }
        self.saved.push(q.to_owned());
        true
    }

    pub fn is_saved(&self, query: &str) -> bool {
        self.saved.iter().any(|s| s == query.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_is_newest_first_without_repeats_and_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/fsgui.toml");
        let mut s = Settings::load(&path);
        assert_eq!(s, Settings::default());
        s.remember("tax 2025");
        s.remember("ext:pdf");
        s.remember(" tax 2025 ");
        assert!(!s.remember("tax 2025"));
        assert_eq!(s.history, ["tax 2025", "ext:pdf"]);
        for i in 0..100 {
            s.remember(&format!("q{i}"));
        }
        assert_eq!(s.history.len(), HISTORY_KEPT);
        assert!(s.toggle_saved("size:>1gb"));
        s.save(&path).unwrap();
        let back = Settings::load(&path);
        assert_eq!(back, s);
        assert!(back.is_saved("size:>1gb"));
        let mut back = back;
        assert!(!back.toggle_saved("size:>1gb"));
        assert!(back.saved.is_empty());
        // A broken file is ignored.
        std::fs::write(&path, "history = 3").unwrap();
        assert_eq!(Settings::load(&path), Settings::default());
    }
}
