//! The duplicates view's state: a running search's progress, the groups as
//! they stream in (largest reclaimable first, as the daemon sends them),
//! the summary, and the copies the user chose to move to the trash (every
//! group keeps at least one).

use std::collections::BTreeSet;

use crate::backend::{DupGroup, DupProgress, DupSummary, DupesEvent, Request};

#[derive(Debug, Default)]
pub struct DupesModel {
    generation: u64,
    pub running: bool,
    pub progress: Option<DupProgress>,
    pub groups: Vec<DupGroup>,
    pub summary: Option<DupSummary>,
    pub error: Option<String>,
    /// Copies chosen to go to the trash, as (group, copy).
    pub discard: BTreeSet<(usize, usize)>,
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

    /// The name a group goes by: the file name most of its copies have
    /// (the first copy's on a tie).
    pub fn name(&self, group: usize) -> String {
        let Some(g) = self.groups.get(group) else {
            return String::new();
        };
        let names: Vec<&[u8]> = g
            .copies
            .iter()
            .filter_map(|c| c.first())
            .map(|p| {
                let at = p.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
                &p[at..]
            })
            .collect();
        let mut best: Option<(&[u8], usize)> = None;
        for n in &names {
            let k = names.iter().filter(|m| *m == n).count();
            if best.is_none_or(|(_, bk)| k > bk) {
                best = Some((n, k));
            }
        }
        best.map_or_else(String::new, |(n, _)| {
            String::from_utf8_lossy(n).into_owned()
        })
    }

    /// Marks a copy to go (or keeps it again). The last copy of a group
    /// kept cannot go: false, nothing changed.
    pub fn toggle_discard(&mut self, group: usize, copy: usize) -> bool {
        if self.discard.remove(&(group, copy)) {
            return true;
        }
        let copies = self.groups.get(group).map_or(0, |g| g.copies.len());
        let going = self.discard.iter().filter(|(g, _)| *g == group).count();
        if copy >= copies || going + 1 >= copies {
            return false;
        }
        self.discard.insert((group, copy));
        true
    }

    /// Keeps `copy` and marks every other copy of its group to go.
    pub fn keep_only(&mut self, group: usize, copy: usize) {
        let copies = self.groups.get(group).map_or(0, |g| g.copies.len());
        self.discard.retain(|(g, _)| *g != group);
        self.discard
            .extend((0..copies).filter(|c| *c != copy).map(|c| (group, c)));
    }

    /// Bytes the copies marked would free (their inodes, once each).
    pub fn discard_bytes(&self) -> u64 {
        self.discard
            .iter()
            .filter_map(|(g, _)| self.groups.get(*g))
            .map(|g| g.size)
            .sum()
    }

    /// Every path of the copies marked: a copy's hard links go with it,
    /// or nothing would be freed.
    pub fn discard_paths(&self) -> Vec<Vec<u8>> {
        self.discard
            .iter()
            .filter_map(|(g, c)| self.groups.get(*g).and_then(|g| g.copies.get(*c)))
            .flatten()
            .cloned()
            .collect()
    }

    /// Paths went to the trash: their copies leave the groups, and a group
    /// left with one copy is no longer a group of duplicates.
    pub fn trashed(&mut self, paths: &[Vec<u8>]) {
        let gone = |copy: &Vec<Vec<u8>>| copy.iter().any(|p| paths.contains(p));
        for g in &mut self.groups {
            g.copies.retain(|c| !gone(c));
            let n = g.copies.len() as u64;
            g.reclaimable_bytes = g.size * n.saturating_sub(1);
        }
        self.groups.retain(|g| g.copies.len() > 1);
        self.discard.clear();
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

    #[test]
    fn copies_chosen_to_go_keep_one_per_group_and_count_what_they_free() {
        let mut m = DupesModel::default();
        let g = |size, paths: &[&[&str]]| DupGroup {
            size,
            hash: String::new(),
            copies: paths
                .iter()
                .map(|c| c.iter().map(|p| p.as_bytes().to_vec()).collect())
                .collect(),
            reclaimable_bytes: size * (paths.len() as u64 - 1),
            reclaimable_allocated_bytes: 0,
        };
        m.groups = vec![
            g(
                100,
                &[
                    &["/a/song (1).mp3"],
                    &["/b/song.mp3", "/b/link.mp3"],
                    &["/c/song.mp3"],
                ],
            ),
            g(7, &[&["/x/w2.pdf"], &["/y/w2.pdf"]]),
        ];
        assert_eq!((m.name(0), m.name(1)), ("song.mp3".into(), "w2.pdf".into()));
        assert!(m.toggle_discard(0, 1));
        assert!(m.toggle_discard(0, 2));
        assert!(!m.toggle_discard(0, 0), "the last copy kept stays");
        assert_eq!(m.discard_bytes(), 200);
        // The hard link goes with its copy.
        assert_eq!(
            m.discard_paths(),
            [
                b"/b/song.mp3".to_vec(),
                b"/b/link.mp3".to_vec(),
                b"/c/song.mp3".to_vec()
            ]
        );
        m.keep_only(1, 1);
        assert_eq!(m.discard_bytes(), 207);
        assert!(m.toggle_discard(0, 1), "kept again");
        assert_eq!(m.discard_bytes(), 107);
        m.trashed(&[b"/c/song.mp3".to_vec(), b"/x/w2.pdf".to_vec()]);
        assert_eq!(m.groups.len(), 1, "w2.pdf has one copy left");
        assert_eq!(m.groups[0].reclaimable_bytes, 100);
        assert!(m.discard.is_empty());
    }
}
