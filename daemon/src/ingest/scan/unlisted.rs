//! What the rules keep out of a folder still counts in `du`: an excluded
//! folder becomes a row of its own with its sizes, and everything else the
//! rules hide is summed into one nameless row per folder. The sizes come
//! from a sizes-only walk ([`measure`]) that keeps no name.

use std::collections::HashMap;
use std::sync::Arc;

use crate::ingest::exclude::Verdict;
use crate::platform::fs::{self as pfs, DirRef, Stat};
use crate::store::{Totals, Unlisted, unix_now};

/// What the rules keep out of one folder: the excluded folders by name,
/// everything else summed into one nameless row.
#[derive(Default)]
pub(in crate::ingest) struct Hidden {
    named: Vec<Unlisted>,
    sum: Totals,
    any_sum: bool,
    /// The files counted in `sum` (those of folders measured into it: the
    /// ones with several links), each inode once.
    seen: Seen,
}

/// Files with several links met by a sizes-only walk, by (dev, ino), with
/// their allocated and apparent bytes.
type Seen = HashMap<(u64, u64), (u64, u64)>;

/// An unlisted row's links, in a stable order.
fn linked(seen: Seen) -> Vec<crate::store::Linked> {
    let mut links: Vec<crate::store::Linked> = seen
        .into_iter()
        .map(|((dev, ino), sizes)| crate::store::Linked {
            dev,
            ino,
            sizes: Some(sizes),
        })
        .collect();
    links.sort_unstable();
    links
}

impl Hidden {
    pub(in crate::ingest) fn add_measured(
        &mut self,
        dfd: DirRef<'_>,
        name: &[u8],
        v: Verdict,
        is_dir: bool,
        root_dev: u64,
        cross: bool,
    ) {
        let Ok(s) = pfs::lstat_at(dfd, pfs::os(name)) else {
            return; // gone, or not even lstat can see it: nothing to count
        };
        if s.is_dir() && !cross && s.dev != root_dev {
            return; // another file system: du -x does not count it either
        }
        if v == Verdict::Exclude && is_dir && s.is_dir() {
            let mut seen = Seen::new();
            let totals = measure(dfd, name, &s, root_dev, cross, &mut seen);
            self.named.push(Unlisted {
                name: name.to_vec(),
                totals,
                measured_at: unix_now(),
                links: linked(seen),
            });
            return;
        }
        let totals = if s.is_dir() {
            measure(dfd, name, &s, root_dev, cross, &mut self.seen)
        } else {
            // Every file here is noted, one link or several: a link made
            // to it later from another folder is seen there, not here, and
            // du must still count the inode once.
            if !first_met(&mut self.seen, &s) {
                return;
            }
            file_totals(&s)
        };
        self.sum.add(totals);
        self.any_sum = true;
    }

    pub(in crate::ingest) fn rows(mut self) -> Vec<Unlisted> {
        if self.any_sum {
            self.named.push(Unlisted {
                name: Vec::new(),
                totals: self.sum,
                measured_at: unix_now(),
                links: linked(self.seen),
            });
        }
        self.named
    }
}

/// Notes a file with its sizes; false when it was met already.
fn first_met(seen: &mut Seen, s: &Stat) -> bool {
    match seen.entry((s.dev, s.ino)) {
        std::collections::hash_map::Entry::Occupied(_) => false,
        std::collections::hash_map::Entry::Vacant(v) => {
            v.insert((s.blocks * 512, s.size));
            true
        }
    }
}

fn file_totals(s: &Stat) -> Totals {
    Totals {
        bytes: s.blocks as i64 * 512,
        apparent: s.size as i64,
        files: 1,
        dirs: 0,
        incomplete: 0,
    }
}

/// Sizes of the folder `name` in `dfd` and everything under it, counted
/// as `du -s` counts (each inode once, other file systems left out), with
/// no name kept: a sizes-only walk for what the index does not hold. Files
/// with several links count unless already in `seen`, and are added to it.
fn measure(
    dfd: DirRef<'_>,
    name: &[u8],
    s: &Stat,
    root_dev: u64,
    cross: bool,
    seen: &mut Seen,
) -> Totals {
    let mut t = Totals {
        bytes: s.blocks as i64 * 512,
        apparent: s.size as i64,
        files: 0,
        dirs: 1,
        incomplete: 0,
    };
    // Folders to list, by their parent's listing handle and name: only
    // folders with subfolders still to open hold a handle.
    let mut stack: Vec<(Option<Arc<pfs::Listing>>, Vec<u8>)> = vec![(None, name.to_vec())];
    while let Some((parent, name)) = stack.pop() {
        let opened = match &parent {
            Some(p) => pfs::listing_fd(p).and_then(|pfd| pfs::open_dir_at(pfd, pfs::os(&name))),
            None => pfs::open_dir_at(dfd, pfs::os(&name)),
        };
        drop(parent);
        let Ok((names, dir)) = opened.and_then(pfs::list) else {
            t.incomplete += 1;
            continue;
        };
        let dir = Arc::new(dir);
        let Ok(sub_fd) = pfs::listing_fd(&dir) else {
            continue;
        };
        for (name, _) in names {
            let Ok(c) = pfs::lstat_at(sub_fd, pfs::os(&name)) else {
                continue;
            };
            if c.is_dir() {
                if !cross && c.dev != root_dev {
                    continue;
                }
                t.bytes += c.blocks as i64 * 512;
                t.apparent += c.size as i64;
                t.dirs += 1;
                stack.push((Some(dir.clone()), name));
            } else {
                if c.nlink > 1 && !first_met(seen, &c) {
                    continue;
                }
                t.add(file_totals(&c));
            }
        }
    }
    t
}
