//! "3,120 photos 2015-2024" (issue 32): how many photos a folder holds and
//! the years they were taken, for `du` and `map`.
//!
//! A photo is a file whose media row has a date taken (the camera's own,
//! `media.taken`); a folder's photos are those anywhere beneath it, the
//! way du counts a folder's files (the whole subtree), so a folder of
//! year folders says "3,120 photos 2015-2024" as a whole. The store groups
//! the photos by the folder holding them; each such folder is walked up
//! once to the folder asked about, adding to every folder of interest on
//! the way.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use crate::Error;
use crate::store::entries::Parents;

/// Photos with a date taken, and the span of years taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Photos {
    pub count: u64,
    pub first_year: i32,
    pub last_year: i32,
}

impl Photos {
    pub(crate) fn add(&mut self, count: u64, first: i32, last: i32) {
        if self.count == 0 {
            (self.first_year, self.last_year) = (first, last);
        } else {
            self.first_year = self.first_year.min(first);
            self.last_year = self.last_year.max(last);
        }
        self.count += count;
    }

    pub(crate) fn add_all(&mut self, other: Photos) {
        if other.count > 0 {
            self.add(other.count, other.first_year, other.last_year);
        }
    }

    /// The span of years taken; `None` without photos.
    pub fn years(&self) -> Option<(i32, i32)> {
        (self.count > 0).then_some((self.first_year, self.last_year))
    }
}

/// Fills a du report's photos: the total's (folder `target`, its whole
/// subtree) and each listed folder's.
pub fn fill(conn: &Connection, target: i64, report: &mut super::du::Report) -> Result<(), Error> {
    let folders = report
        .children
        .iter()
        .filter(|u| u.kind == Some(crate::store::Kind::Dir) && u.id != 0)
        .map(|u| u.id)
        .collect();
    let (total, each) = beneath(conn, target, &folders)?;
    report.total.photos = total;
    for u in &mut report.children {
        if let Some(p) = each.get(&u.id) {
            u.photos = *p;
        }
    }
    Ok(())
}

/// The photos beneath folder `target` (its whole subtree), and beneath each
/// of `folders` (folders under `target`) that holds any.
pub fn beneath(
    conn: &Connection,
    target: i64,
    folders: &HashSet<i64>,
) -> Result<(Photos, HashMap<i64, Photos>), Error> {
    let mut total = Photos::default();
    let mut each: HashMap<i64, Photos> = HashMap::new();
    let mut parents = Parents::new(conn)?;
    // Folders known to be outside the target, and those known inside with
    // the folders of interest from them up to the target.
    let mut outside: HashSet<i64> = HashSet::new();
    let mut inside: HashMap<i64, Vec<i64>> = HashMap::new();
    for (folder, count, first, last) in crate::store::media::taken_by_folder(conn)? {
        let here = Photos {
            count,
            first_year: first,
            last_year: last,
        };
        let mut chain = Vec::new();
        let mut cur = folder;
        let above = loop {
            if cur == target {
                break Some(Vec::new());
            }
            if outside.contains(&cur) {
                break None;
            }
            if let Some(up) = inside.get(&cur) {
                break Some(up.clone());
            }
            chain.push(cur);
            match parents.of(cur)? {
                Some(p) => cur = p,
                None => break None,
            }
        };
        let Some(mut listed) = above else {
            outside.extend(chain);
            continue;
        };
        // Down the chain, each folder's interesting ones up to the target.
        for &d in chain.iter().rev() {
            if folders.contains(&d) {
                listed.push(d);
            }
            inside.insert(d, listed.clone());
        }
        total.add_all(here);
        for d in listed {
            each.entry(d).or_default().add_all(here);
        }
    }
    Ok((total, each))
}
