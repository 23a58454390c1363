//! The window's own choices (theme, accents, columns, programs to open
//! with), kept in `fsgui.toml` in the instance's config directory (beside
//! the daemon's `config.toml`, or under `FSINDEX_HOME`). Search history and
//! saved searches are the daemon's (see `crate::shared`); what an older
//! fsgui kept here of them is read once, to be moved into the daemon. A
//! file that cannot be read or parsed is ignored (and replaced on the next
//! save): losing a setting is no reason not to start.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Recent queries, newest first, as an older fsgui kept them: moved
    /// into the daemon's history at the first connection, then emptied.
    pub history: Vec<String>,
    /// Queries an older fsgui saved, in the order saved: moved into the
    /// daemon's saved searches the same way.
    pub saved: Vec<String>,
    /// Programs files were opened with ("Open with…"), newest first.
    pub open_with: Vec<String>,
    /// "light" or "dark" once chosen with the toggle; unset: egui's default
    /// (the system's, where the platform reports one).
    pub theme: Option<String>,
    /// Whether queries match accents (`accents:ignore` unless set): unset
    /// is Everything's default, `cafe` finding `café`.
    pub match_accents: Option<bool>,
    /// The results table's optional columns turned on, by title
    /// (`Dimensions`, `Duration`, `Taken`, `Tags`; see `crate::details`),
    /// in the order shown. None unless chosen.
    pub columns: Vec<String>,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_survive_a_restart_and_a_broken_file_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/fsgui.toml");
        let mut s = Settings::load(&path);
        assert_eq!(s, Settings::default());
        assert!(s.remember_program("gimp"));
        assert!(s.remember_program("eog"));
        assert!(!s.remember_program("eog"));
        assert_eq!(s.open_with, ["eog", "gimp"]);
        s.columns = vec!["Taken".into(), "Tags".into()];
        s.theme = Some("light".into());
        s.save(&path).unwrap();
        assert_eq!(Settings::load(&path), s);
        // What an older fsgui wrote is read (to be imported).
        std::fs::write(&path, "history = [\"w2\"]\nsaved = [\"ext:pdf\"]\n").unwrap();
        let old = Settings::load(&path);
        assert_eq!(
            (old.history, old.saved),
            (vec!["w2".to_owned()], vec!["ext:pdf".to_owned()])
        );
        // A broken file is ignored.
        std::fs::write(&path, "history = 3").unwrap();
        assert_eq!(Settings::load(&path), Settings::default());
    }
}
