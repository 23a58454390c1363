//! The duplicates view's state: a running search's progress, the groups as
//! they stream in (largest reclaimable first, as the daemon sends them),
//! and the summary.

use crate::backend::{DupGroup, DupProgress, DupSummary, DupesEvent, Request};

#[derive(Debug, Default)]
pub struct DupesModel {
    generation: u64,
    pub running: bool,
    pub progress: Option<DupProgress>,
    pub groups: Vec<DupGroup>,
    pub summary: Option<DupSummary>,
    pub error: Option<String>,
}

impl DupesModel {
    /// Starts (or restarts) a search over every root.
    pub fn start(&mut self) -> Vec<Request> {
        self.generation += 1;
        *self = DupesModel {
            generation: self.generation,
            running: true,
            ..DupesModel::default()
        };
        vec![Request::Duplicates {
            generation: self.generation,
        }]
    }

    /// Started at least once.
    pub fn started(&self) -> bool {
        self.generation > 0
    }

    pub fn apply(&mut self, generation: u64, event: DupesEvent) {
        if generation != self.generation {
            return;
        }
        match event {
            DupesEvent::Progress(p) => self.progress = Some(p),
            DupesEvent::Group(g) => self.groups.push(g),
            DupesEvent::Done(r) => {
                self.running = false;
                self.progress = None;
                match r {
                    Ok(s) => self.summary = Some(s),
                    Err(e) => self.error = Some(e),
                }
            }
        }
    }

    /// Reclaimable bytes of the groups received so far.
    pub fn reclaimable(&self) -> u64 {
        self.groups.iter().map(|g| g.reclaimable_bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_stream_in_and_a_restart_drops_the_old_run() {
        let mut m = DupesModel::default();
        let Request::Duplicates { generation: g1 } = m.start()[0] else {
            panic!()
        };
        let group = DupGroup {
            size: 10,
            hash: "ab".into(),
            copies: vec![vec![b"/a".to_vec()], vec![b"/b".to_vec()]],
            reclaimable_bytes: 10,
            reclaimable_allocated_bytes: 4096,
        };
        m.apply(g1, DupesEvent::Group(group.clone()));
        let Request::Duplicates { generation: g2 } = m.start()[0] else {
            panic!()
        };
        m.apply(g1, DupesEvent::Group(group.clone()));
        assert!(m.groups.is_empty() && m.running);
        m.apply(g2, DupesEvent::Group(group));
        m.apply(g2, DupesEvent::Done(Ok(DupSummary::default())));
        assert_eq!(m.reclaimable(), 10);
        assert!(!m.running && m.summary.is_some());
    }
}
