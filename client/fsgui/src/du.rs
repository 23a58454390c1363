//! The disk-usage view's state: which folder is shown, the breadcrumb back
//! to its root, and the daemon's answer for it. Drilling down and going
//! back are requests; answers of an older request are dropped.

use crate::backend::{DuAnswer, Request, Usage};

#[derive(Debug, Default)]
pub struct DuModel {
    /// The folder shown (absolute, byte-exact); `None` until the roots are known.
    pub path: Option<Vec<u8>>,
    /// The root the folder is under.
    pub root: Vec<u8>,
    generation: u64,
    pub loading: bool,
    pub answer: Option<DuAnswer>,
    pub error: Option<String>,
    /// The child the keyboard is on (an index into the answer's children).
    pub cursor: Option<usize>,
}

impl DuModel {
    /// Shows `path` (under `root`).
    pub fn open(&mut self, root: &[u8], path: &[u8]) -> Vec<Request> {
        self.root = root.to_vec();
        self.path = Some(path.to_vec());
        self.cursor = None;
        self.reload()
    }

    /// Asks again for the folder shown (after a change in the index).
    pub fn reload(&mut self) -> Vec<Request> {
        let Some(path) = self.path.clone() else {
            return Vec::new();
        };
        self.generation += 1;
        self.loading = true;
        vec![Request::DiskUsage {
            generation: self.generation,
            path,
        }]
    }

    /// Drills down into a child folder.
    pub fn enter(&mut self, child: &Usage) -> Vec<Request> {
        if !child.kind.is_folder() {
            return Vec::new();
        }
        let root = self.root.clone();
        self.open(&root, &child.path)
    }

    pub fn apply(&mut self, generation: u64, answer: Result<DuAnswer, String>) {
        if generation != self.generation {
            return;
        }
        self.loading = false;
        match answer {
            Ok(a) => {
                self.answer = Some(a);
                self.error = None;
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// From the root to the folder shown: (label, path) per step.
    pub fn breadcrumb(&self) -> Vec<(String, Vec<u8>)> {
        let Some(path) = &self.path else {
            return Vec::new();
        };
        let mut out = vec![(
            String::from_utf8_lossy(&self.root).into_owned(),
            self.root.clone(),
        )];
        let Some(rest) = path.strip_prefix(self.root.as_slice()) else {
            return out;
        };
        let mut at = self.root.clone();
        for part in rest.split(|&b| b == b'/').filter(|p| !p.is_empty()) {
            if at.last() != Some(&b'/') {
                at.push(b'/');
            }
            at.extend_from_slice(part);
            out.push((String::from_utf8_lossy(part).into_owned(), at.clone()));
        }
        out
    }

    /// Up one level (not above the root).
    /// Up/Down: the cursor moves over the children shown.
    pub fn move_cursor(&mut self, delta: i64) {
        let n = self.answer.as_ref().map_or(0, |a| a.children.len());
        if n == 0 {
            return;
        }
        self.cursor = Some(match self.cursor {
            None if delta < 0 => n - 1,
            None => 0,
            Some(c) => (c as i64 + delta).clamp(0, n as i64 - 1) as usize,
        });
    }

    /// The child under the cursor.
    pub fn selected(&self) -> Option<&Usage> {
        self.answer.as_ref()?.children.get(self.cursor?)
    }

    pub fn up(&mut self) -> Vec<Request> {
        let crumbs = self.breadcrumb();
        match crumbs.len() {
            0 | 1 => Vec::new(),
            n => {
                let root = self.root.clone();
                self.open(&root, &crumbs[n - 2].1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::RowKind;

    #[test]
    fn breadcrumb_and_drill_down() {
        let mut m = DuModel::default();
        let r = m.open(b"/data", b"/data");
        assert!(matches!(&r[0], Request::DiskUsage { path, .. } if path == b"/data"));
        let child = Usage {
            path: b"/data/Taxes".to_vec(),
            name: "Taxes".into(),
            kind: RowKind::Folder,
            ..Usage::default()
        };
        m.enter(&child);
        let r = m.enter(&Usage {
            path: b"/data/Taxes/2025".to_vec(),
            kind: RowKind::Folder,
            ..Usage::default()
        });
        let Request::DiskUsage { generation, .. } = r[0].clone() else {
            panic!()
        };
        let labels: Vec<String> = m.breadcrumb().into_iter().map(|c| c.0).collect();
        assert_eq!(labels, ["/data", "Taxes", "2025"]);
        // A stale answer is dropped, the current one kept.
        m.apply(generation - 1, Err("old".into()));
        assert!(m.loading && m.error.is_none());
        m.apply(generation, Ok(DuAnswer::default()));
        assert!(!m.loading && m.answer.is_some());
        // Files are not entered.
        assert!(m.enter(&Usage::default()).is_empty());
        m.up();
        assert_eq!(m.path.as_deref(), Some(&b"/data/Taxes"[..]));
    }
}
