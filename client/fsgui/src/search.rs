//! The search view's state and its reducers: the query, the page cache of
//! the virtualised table, the selection. No egui and no I/O here: every
//! change returns the requests to send, every answer is applied by
//! [`SearchModel::apply`], so the whole behaviour is testable without a
//! window or a daemon.
//!
//! Generations: every request carries the generation of the result set it
//! belongs to. A new query (or sort) and a refresh after a change in the
//! index each start a generation; answers of any other generation are
//! dropped, so a slow answer to an old keystroke never overwrites a newer
//! one, and pages of two versions of the index are never mixed.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::backend::{Request, Row, SearchParams, SortKey};

/// Rows per page of the Search RPC.
pub const PAGE: u64 = 200;
/// Pages kept (and fetched ahead) on each side of the visible ones.
pub const MARGIN_PAGES: u64 = 1;
/// Rows a new query asks for first: the first page and the margin after
/// it, in one request. The margin was a second search as soon as the first
/// rows were drawn, and the daemon's cost hardly depends on how many rows
/// it sends: a one-letter query over a million names marks and ranks them
/// all either way (40-45 ms), so the second request doubled the CPU each
/// keystroke took, on a machine the window, the daemon and the renderer
/// share.
pub const FIRST_ROWS: u64 = PAGE * (1 + MARGIN_PAGES);
/// Page requests in flight at once: a fast scroll through a million rows
/// asks for what is visible when an answer lands, not for every page it
/// passed over.
const MAX_PAGE_REQUESTS: usize = 2;
/// Keystroke-to-paint latencies kept for the status line and benchmarks.
const LATENCIES_KEPT: usize = 4096;

/// Why a generation was started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Started {
    /// A new query or order: the table starts at the top.
    NewQuery { at: Instant },
    /// The index changed: the same query again, scroll and selection kept.
    Refresh,
}

/// A malformed query, as the daemon described it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryError {
    /// The query it was about.
    pub query: String,
    pub message: String,
    /// Byte range of the bad part within `query`, when the message names it.
    pub bad: Option<std::ops::Range<usize>>,
}

impl QueryError {
    pub fn new(query: &str, message: &str) -> QueryError {
        QueryError {
            query: query.to_owned(),
            message: message.to_owned(),
            bad: bad_part(query, message),
        }
    }
}

/// The longest `quoted` part of the daemon's message that occurs in the
/// query: the daemon quotes what it could not parse (`unknown filter
/// `foo:` in `foo:bar``).
fn bad_part(query: &str, message: &str) -> Option<std::ops::Range<usize>> {
    message
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|q| !q.is_empty())
        .filter_map(|q| query.find(q).map(|at| at..at + q.len()))
        .max_by_key(|r| r.len())
}

/// The rows shown: one generation's answer, in pages.
#[derive(Debug, Default)]
pub struct Results {
    pub params: SearchParams,
    /// The generation these rows belong to.
    pub generation: u64,
    /// Changes when a new query's rows replace the table (scroll to top).
    pub epoch: u64,
    pub total: u64,
    pub elapsed_us: u64,
    pages: BTreeMap<u64, Vec<Row>>,
    requested: BTreeSet<u64>,
}

impl Results {
    /// The row at `index`, if its page is loaded.
    pub fn row(&self, index: u64) -> Option<&Row> {
        self.pages
            .get(&(index / PAGE))
            .and_then(|p| p.get((index % PAGE) as usize))
    }

    /// Rows held in memory now.
    pub fn rows_held(&self) -> usize {
        self.pages.values().map(Vec::len).sum()
    }

    pub fn pages_held(&self) -> Vec<u64> {
        self.pages.keys().copied().collect()
    }

    fn index_of(&self, path: &[u8]) -> Option<u64> {
        self.pages.iter().find_map(|(p, rows)| {
            rows.iter()
                .position(|r| r.path == path)
                .map(|i| p * PAGE + i as u64)
        })
    }

    fn insert(&mut self, offset: u64, rows: Vec<Row>) {
        // Answers start on a page boundary (see `page_request`).
        let mut page = offset / PAGE;
        let mut rows = rows.into_iter().peekable();
        while rows.peek().is_some() {
            let chunk: Vec<Row> = rows.by_ref().take(PAGE as usize).collect();
            self.requested.remove(&page);
            self.pages.insert(page, chunk);
            page += 1;
        }
    }
}

/// The search view's whole state.
#[derive(Debug, Default)]
pub struct SearchModel {
    /// What the query box holds.
    pub query: String,
    pub sort: SortKey,
    pub reverse: bool,
    /// Keep the order for every query (otherwise a new query starts in
    /// relevance order).
    pub pinned: bool,
    /// Queries ignore accents (`accents:ignore`): `cafe` finds `café`.
    pub ignore_accents: bool,
    /// The query the order was chosen for: edits at its end keep the order,
    /// another query goes back to relevance.
    sorted_for: String,
    /// Where a Shift+click range starts (the last plain or Ctrl click).
    anchor: Option<u64>,
    /// The newest generation asked for, and why.
    generation: u64,
    /// What the newest new query asked for (the query box is edited in
    /// place, so `query` is no record of it).
    asked: Option<SearchParams>,
    started: Option<Started>,
    /// The rows shown (the last good answer).
    pub results: Results,
    /// The last answer was an error for the current query.
    pub error: Option<QueryError>,
    /// The rows shown are from before a failure (the daemon went away,
    /// a search failed): why. Cleared by the next answer.
    pub outdated: Option<String>,
    /// Rows drawn in the last frame (first, last), for paging and Page Up/Down.
    visible: Option<(u64, u64)>,
    /// Selected rows by path (they survive refreshes); the last is the
    /// one keyboard moves start from.
    pub selection: Vec<Vec<u8>>,
    /// The index of the primary selection.
    pub cursor: Option<u64>,
    /// Set when the cursor moved by keyboard: the table scrolls to it.
    pub scroll_to_cursor: bool,
    /// Scroll the table to this offset in points (benchmarks).
    pub scroll_offset: Option<f32>,
    /// Keystroke (or sort click) to the first frame that painted its rows.
    pub latencies: Vec<Duration>,
    /// Rows of this generation are waiting to be painted.
    unpainted: Option<(u64, Instant)>,
    /// The index changed while a request was in flight: refresh after it.
    stale: bool,
}

impl SearchModel {
    /// The query box changed: ask for the first page of the new query (the
    /// backend cancels the previous request). An empty query clears the
    /// table.
    ///
    /// A change that leaves the query asked for as it was (a space typed
    /// between two words, before the next) asks nothing again.
    pub fn set_query(&mut self, query: &str) -> Vec<Request> {
        self.query = query.to_owned();
        if !self.pinned && self.sort != SortKey::Relevance && !self.same_query(query) {
            self.sort = SortKey::Relevance;
            self.reverse = false;
        }
        if self.asked.as_ref() == Some(&self.params())
            && self.error.is_none()
            && self.outdated.is_none()
        {
            return Vec::new();
        }
        self.restart()
    }

    /// `query` is the one the order was chosen for, edited at its end
    /// (a word added, a typo taken back), not a new one.
    fn same_query(&self, query: &str) -> bool {
        let (new, old) = (query.trim(), self.sorted_for.trim());
        !new.is_empty() && (new.starts_with(old) || old.starts_with(new))
    }

    /// An order chosen (a header, the relevance button).
    pub fn set_sort(&mut self, sort: SortKey, reverse: bool) -> Vec<Request> {
        self.sort = sort;
        self.reverse = reverse;
        self.sorted_for = self.query.clone();
        self.restart()
    }

    /// A column header was clicked: that order, then reversed, then back
    /// to relevance.
    pub fn header_clicked(&mut self, key: SortKey) -> Vec<Request> {
        match (self.sort == key, self.reverse) {
            (false, _) => self.set_sort(key, false),
            (true, false) => self.set_sort(key, true),
            (true, true) => self.set_sort(SortKey::Relevance, false),
        }
    }

    fn params(&self) -> SearchParams {
        SearchParams {
            query: self.query.trim().to_owned(),
            sort: self.sort,
            reverse: self.reverse,
            ignore_accents: self.ignore_accents,
        }
    }

    /// The accents toggle: the same query again, matched the other way.
    pub fn set_ignore_accents(&mut self, ignore: bool) -> Vec<Request> {
        if self.ignore_accents == ignore {
            return Vec::new();
        }
        self.ignore_accents = ignore;
        self.restart()
    }

    fn restart(&mut self) -> Vec<Request> {
        self.generation += 1;
        self.stale = false;
        let params = self.params();
        self.asked = Some(params.clone());
        if params.query.is_empty() {
            self.started = None;
            self.error = None;
            self.results = Results {
                generation: self.generation,
                epoch: self.results.epoch + 1,
                ..Results::default()
            };
            self.selection.clear();
            self.cursor = None;
            return vec![Request::CancelSearch];
        }
        self.started = Some(Started::NewQuery { at: Instant::now() });
        vec![Request::Search {
            generation: self.generation,
            params,
            offset: 0,
            limit: FIRST_ROWS,
            new: true,
        }]
    }

    /// Something under the roots changed: ask again for the pages in view,
    /// keeping the scroll position and the selection.
    pub fn refresh(&mut self) -> Vec<Request> {
        if self.results.params.query.is_empty() || self.error.is_some() {
            return Vec::new();
        }
        if self.started.is_some() {
            // An answer is on its way; it may predate the change.
            self.stale = true;
            return Vec::new();
        }
        self.generation += 1;
        self.started = Some(Started::Refresh);
        let (first, last) = self.visible.unwrap_or((0, 0));
        let from = (first / PAGE).saturating_sub(MARGIN_PAGES);
        let to = last / PAGE + MARGIN_PAGES;
        vec![Request::Search {
            generation: self.generation,
            params: self.results.params.clone(),
            offset: from * PAGE,
            limit: (to - from + 1) * PAGE,
            new: true,
        }]
    }

    /// True while the newest request has not been answered.
    pub fn busy(&self) -> bool {
        self.started.is_some()
    }

    /// Rows of the current query that were asked for and not yet received.
    pub fn loading(&self) -> bool {
        self.busy() || !self.results.requested.is_empty()
    }

    /// An answer (one page, or the first page of a new query) arrived.
    pub fn apply_rows(
        &mut self,
        generation: u64,
        offset: u64,
        total: u64,
        elapsed_us: u64,
        rows: Vec<Row>,
    ) -> Vec<Request> {
        if generation == self.generation
            && let Some(started) = self.started
        {
            let params = self.params_of_generation();
            self.started = None;
            let keep_epoch = matches!(started, Started::Refresh);
            let epoch = self.results.epoch + u64::from(!keep_epoch);
            self.results = Results {
                params,
                generation,
                epoch,
                total,
                elapsed_us,
                ..Results::default()
            };
            self.results.insert(offset, rows);
            self.error = None;
            self.outdated = None;
            match started {
                Started::NewQuery { at } => {
                    self.selection.clear();
                    self.cursor = None;
                    self.unpainted = Some((generation, at));
                }
                Started::Refresh => {
                    // The selection follows its path; if it is gone, the
                    // cursor stays at the same place.
                    if let Some(path) = self.selection.last()
                        && let Some(i) = self.results.index_of(path)
                    {
                        self.cursor = Some(i);
                    }
                    if let Some(c) = self.cursor
                        && c >= total
                    {
                        self.cursor = total.checked_sub(1);
                    }
                }
            }
            if std::mem::take(&mut self.stale) {
                return self.refresh();
            }
            return Vec::new();
        }
        if generation == self.results.generation && self.started.is_none() {
            self.results.total = total;
            self.results.insert(offset, rows);
        }
        Vec::new()
    }

    /// The parameters of the newest generation (a refresh keeps the shown
    /// query's, a new query has the box's).
    fn params_of_generation(&self) -> SearchParams {
        match self.started {
            Some(Started::Refresh) => self.results.params.clone(),
            _ => self.params(),
        }
    }

    /// The daemon refused the newest request (`invalid`: a malformed
    /// query, shown with its bad part) or the search failed (the rows
    /// shown are marked out of date); the last good rows stay either way.
    pub fn apply_error(&mut self, generation: u64, message: &str, invalid: bool) {
        if generation != self.generation {
            if generation == self.results.generation {
                // A page failed (the daemon went away): ask again later.
                self.results.requested.clear();
                if !invalid {
                    self.outdated = Some(message.to_owned());
                }
            }
            return;
        }
        self.started = None;
        self.stale = false;
        if invalid {
            self.error = Some(QueryError::new(self.query.trim(), message));
        } else {
            self.outdated = Some(message.to_owned());
        }
    }

    /// The daemon went away: whatever was asked for will not be answered,
    /// and the rows shown are out of date until [`SearchModel::rerun`].
    pub fn went_away(&mut self, why: &str) {
        self.started = None;
        self.stale = false;
        self.results.requested.clear();
        if !self.results.params.query.is_empty() || !self.query.trim().is_empty() {
            self.outdated = Some(why.to_owned());
        }
    }

    /// A daemon answers again: ask for the query in the box anew, keeping
    /// the scroll position and the selection when the rows shown are that
    /// query's.
    pub fn rerun(&mut self) -> Vec<Request> {
        self.outdated = None;
        self.started = None;
        self.results.requested.clear();
        if self.query.trim().is_empty() {
            return Vec::new();
        }
        if self.error.is_none() && self.results.params == self.params() {
            return self.refresh();
        }
        self.restart()
    }

    /// The table drew rows `first..=last` (or none): fetch what is missing
    /// around them and forget pages far away.
    pub fn visible_rows(&mut self, rows: Option<(u64, u64)>) -> Vec<Request> {
        let Some((first, last)) = rows else {
            // The table is not shown (another view): keep what is held.
            return Vec::new();
        };
        self.visible = rows;
        let r = &mut self.results;
        if r.total == 0 || self.started.is_some() || r.params.query.is_empty() {
            return Vec::new();
        }
        let last_page = (r.total - 1) / PAGE;
        let from = (first / PAGE).saturating_sub(MARGIN_PAGES);
        let to = (last / PAGE + MARGIN_PAGES).min(last_page);
        // Only what is visible plus the margin stays in memory.
        r.pages.retain(|p, _| (from..=to).contains(p));
        let mut out = Vec::new();
        let mut in_flight = r.requested.len();
        // Visible pages first, then the margin.
        let visible = (first / PAGE).min(last_page)..=(last / PAGE).min(last_page);
        let margin = (from..=to).filter(|p| !visible.contains(p));
        for page in visible.clone().chain(margin) {
            if in_flight >= MAX_PAGE_REQUESTS {
                break;
            }
            if r.pages.contains_key(&page) || r.requested.contains(&page) {
                continue;
            }
            r.requested.insert(page);
            in_flight += 1;
            out.push(Request::Search {
                generation: r.generation,
                params: r.params.clone(),
                offset: page * PAGE,
                limit: PAGE,
                new: false,
            });
        }
        out
    }

    /// The frame painted the rows of the newest answer: record the latency
    /// from the keystroke.
    pub fn painted(&mut self) -> Option<Duration> {
        let (generation, at) = self.unpainted?;
        if generation != self.results.generation {
            return None;
        }
        self.unpainted = None;
        let d = at.elapsed();
        crate::trace::event(format_args!(
            "painted gen={generation} since_key_ms={:.2}",
            d.as_secs_f64() * 1e3
        ));
        if self.latencies.len() >= LATENCIES_KEPT {
            self.latencies.remove(0);
        }
        self.latencies.push(d);
        Some(d)
    }

    /// Rows drawn in the last frame.
    pub fn visible(&self) -> Option<(u64, u64)> {
        self.visible
    }

    /// The primary selected row, if loaded.
    pub fn selected_row(&self) -> Option<&Row> {
        self.cursor.and_then(|c| self.results.row(c))
    }

    /// Click on a row: select it alone, or with Ctrl add or remove it.
    pub fn click(&mut self, index: u64, toggle: bool) {
        let Some(path) = self.results.row(index).map(|r| r.path.clone()) else {
            return;
        };
        self.anchor = Some(index);
        if toggle {
            if let Some(at) = self.selection.iter().position(|p| *p == path) {
                self.selection.remove(at);
                self.cursor = self.selection.last().and_then(|p| self.results.index_of(p));
                return;
            }
        } else {
            self.selection.clear();
        }
        self.selection.push(path);
        self.cursor = Some(index);
    }

    /// Shift+click: the rows from the anchor (the last click) to `index`
    /// are the selection (with Ctrl, added to it). Rows of pages not held
    /// (far from the view) cannot be named, so a range stops at what is
    /// loaded: the pages in view and one either side.
    pub fn click_range(&mut self, index: u64, add: bool) {
        let anchor = self.anchor.or(self.cursor).unwrap_or(index);
        let (a, b) = (anchor.min(index), anchor.max(index));
        if !add {
            self.selection.clear();
        }
        for i in a..=b {
            if let Some(r) = self.results.row(i)
                && !self.selection.contains(&r.path)
            {
                self.selection.push(r.path.clone());
            }
        }
        // The clicked row is the cursor; the anchor stays for the next range.
        if let Some(r) = self.results.row(index) {
            let p = r.path.clone();
            self.selection.retain(|x| *x != p);
            self.selection.push(p);
        }
        self.anchor = Some(anchor);
        self.cursor = Some(index);
    }

    /// Home and End: the first or the last row (with no row selected
    /// too: Ctrl+Home then goes to the first, not to the last).
    pub fn cursor_to_end(&mut self, end: bool) {
        let total = self.results.total as i64;
        if self.cursor.is_none() && !end {
            // From nowhere, a move down lands on the first row.
            self.move_cursor(1);
        } else {
            self.move_cursor(if end { total } else { -total });
        }
    }

    /// Arrow keys and Page Up/Down: move the cursor by `delta` rows.
    pub fn move_cursor(&mut self, delta: i64) {
        let total = self.results.total;
        if total == 0 {
            return;
        }
        let to = match self.cursor {
            None if delta > 0 => 0,
            None => total - 1,
            Some(c) => (c as i64 + delta).clamp(0, total as i64 - 1) as u64,
        };
        self.cursor = Some(to);
        self.anchor = Some(to);
        self.selection = self
            .results
            .row(to)
            .map(|r| vec![r.path.clone()])
            .unwrap_or_default();
        self.scroll_to_cursor = true;
    }

    /// Rows a page key moves by: those visible in the last frame.
    pub fn page_rows(&self) -> i64 {
        self.visible
            .map(|(a, b)| (b - a).max(1) as i64)
            .unwrap_or(10)
    }

    /// Selected paths in display order; the cursor's row when the
    /// selection's paths were never loaded.
    pub fn selected_paths(&self) -> Vec<Vec<u8>> {
        if self.selection.is_empty() {
            return self
                .selected_row()
                .map(|r| vec![r.path.clone()])
                .unwrap_or_default();
        }
        self.selection.clone()
    }

    pub fn is_selected(&self, row: &Row) -> bool {
        self.selection.contains(&row.path)
    }

    /// The generation a test or the screenshot mode waits for.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::RowKind;

    fn rows(from: u64, n: u64) -> Vec<Row> {
        (from..from + n)
            .map(|i| Row {
                path: format!("/r/f{i}").into_bytes(),
                name: format!("f{i}"),
                folder: "/r".into(),
                kind: RowKind::File,
                size: i,
                mtime_ns: 0,
                sensitive: false,
                marks: Vec::new(),
            })
            .collect()
    }

    fn search_of(r: &Request) -> (u64, u64, u64, bool) {
        match r {
            Request::Search {
                generation,
                offset,
                limit,
                new,
                ..
            } => (*generation, *offset, *limit, *new),
            other => panic!("not a search: {other:?}"),
        }
    }

    #[test]
    fn a_newer_keystroke_wins_over_a_late_answer() {
        let mut m = SearchModel::default();
        let a = m.set_query("re");
        let b = m.set_query("rep");
        let (ga, ..) = search_of(&a[0]);
        let (gb, off, lim, new) = search_of(&b[0]);
        assert!(gb > ga && off == 0 && lim == FIRST_ROWS && new);
        m.apply_rows(gb, 0, 3, 10, rows(0, 3));
        // The old answer lands late: ignored.
        m.apply_rows(ga, 0, 999, 10, rows(100, 200));
        assert_eq!(m.results.total, 3);
        assert_eq!(m.results.params.query, "rep");
    }

    #[test]
    fn a_new_query_asks_for_its_first_page_and_margin_at_once() {
        let mut m = SearchModel::default();
        let (g, off, lim, new) = search_of(&m.set_query("e")[0]);
        assert_eq!((off, lim, new), (0, 2 * PAGE, true));
        // The daemon sends both pages in one answer: nothing more is asked
        // for while the table shows its first rows.
        m.apply_rows(g, 0, 1_000_000, 5, rows(0, 2 * PAGE));
        assert!(m.visible_rows(Some((0, 30))).is_empty());
        assert_eq!(m.results.rows_held() as u64, 2 * PAGE);
        assert_eq!(
            m.results.row(PAGE + 3).unwrap().name,
            format!("f{}", PAGE + 3)
        );
        // Scrolled into the second page: the one after it, as before.
        let next = m.visible_rows(Some((PAGE + 10, PAGE + 40)));
        assert_eq!(
            next.iter().map(|r| search_of(r).1).collect::<Vec<_>>(),
            [2 * PAGE]
        );
    }

    #[test]
    fn a_space_between_words_asks_nothing_again() {
        // As the query box does: the text edited in place, then set.
        fn typed(m: &mut SearchModel, text: &str) -> Vec<Request> {
            m.query = text.to_owned();
            m.set_query(text)
        }
        let mut m = SearchModel::default();
        let g = search_of(&typed(&mut m, "t")[0]).0;
        let g = search_of(&typed(&mut m, "tax")[0]).0.max(g);
        // Typed before the first answer, and after it: the same query.
        assert!(typed(&mut m, "tax ").is_empty());
        m.apply_rows(g, 0, 3, 5, rows(0, 3));
        assert!(typed(&mut m, "tax  ").is_empty());
        assert_eq!((m.results.total, m.query.as_str()), (3, "tax  "));
        // The next word is a new query.
        let (g2, ..) = search_of(&typed(&mut m, "tax 2")[0]);
        assert!(g2 > g);
        // Taken back to the first word: asked again (the rows are of "tax 2").
        assert_eq!(typed(&mut m, "tax").len(), 1);
        // The same query after a refusal is asked again too.
        m.apply_error(g2 + 1, "bad", true);
        assert_eq!(typed(&mut m, "tax ").len(), 1);
    }

    #[test]
    fn a_malformed_query_keeps_the_last_good_rows() {
        let mut m = SearchModel::default();
        let g = search_of(&m.set_query("report")[0]).0;
        m.apply_rows(g, 0, 2, 5, rows(0, 2));
        let g = search_of(&m.set_query("report foo:bar")[0]).0;
        m.apply_error(g, "unknown filter `foo:` in `foo:bar`; filters: ...", true);
        let e = m.error.clone().unwrap();
        assert_eq!(&e.query[e.bad.clone().unwrap()], "foo:bar");
        assert_eq!(m.results.total, 2);
        assert_eq!(m.results.row(1).unwrap().name, "f1");
        // Fixing it clears the error.
        let g = search_of(&m.set_query("report")[0]).0;
        m.apply_rows(g, 0, 1, 5, rows(0, 1));
        assert!(m.error.is_none());
    }

    #[test]
    fn only_visible_pages_and_a_margin_are_held() {
        let mut m = SearchModel::default();
        let g = search_of(&m.set_query("x")[0]).0;
        m.apply_rows(g, 0, 1_000_000, 5, rows(0, PAGE));
        // Jump to the middle: the visible page and the margin are asked
        // for, at most MAX_PAGE_REQUESTS at once, visible first.
        let reqs = m.visible_rows(Some((500_000, 500_030)));
        let offsets: Vec<u64> = reqs.iter().map(|r| search_of(r).1).collect();
        assert_eq!(
            offsets,
            [500_000 / PAGE * PAGE, 500_000 / PAGE * PAGE - PAGE]
        );
        assert!(reqs.iter().all(|r| !search_of(r).3));
        // Page 0 is far away now: dropped.
        assert_eq!(m.results.rows_held(), 0);
        for o in offsets {
            m.apply_rows(g, o, 1_000_000, 5, rows(o, PAGE));
        }
        let more = m.visible_rows(Some((500_000, 500_030)));
        assert_eq!(more.len(), 1);
        let o = search_of(&more[0]).1;
        m.apply_rows(g, o, 1_000_000, 5, rows(o, PAGE));
        assert!(m.visible_rows(Some((500_000, 500_030))).is_empty());
        assert_eq!(m.results.rows_held() as u64, 3 * PAGE);
        assert_eq!(m.results.row(500_010).unwrap().name, "f500010");
    }

    #[test]
    fn a_refresh_keeps_scroll_and_selection() {
        let mut m = SearchModel::default();
        let g = search_of(&m.set_query("f")[0]).0;
        m.apply_rows(g, 0, 1000, 5, rows(0, PAGE));
        let epoch = m.results.epoch;
        for r in m.visible_rows(Some((0, 20))) {
            let (g, o, ..) = search_of(&r);
            m.apply_rows(g, o, 1000, 5, rows(o, PAGE));
        }
        m.click(7, false);
        assert_eq!(m.selected_row().unwrap().name, "f7");
        let r = m.refresh();
        let (g2, off, lim, _) = search_of(&r[0]);
        assert_eq!((off, lim), (0, 2 * PAGE));
        // A file was created before f7: f7 is now row 8.
        let mut fresh = rows(0, 2 * PAGE);
        fresh.insert(
            3,
            Row {
                name: "new".into(),
                path: b"/r/new".to_vec(),
                ..fresh[0].clone()
            },
        );
        m.apply_rows(g2, 0, 1001, 5, fresh);
        assert_eq!(m.results.epoch, epoch, "no scroll reset");
        assert_eq!(m.cursor, Some(8));
        assert_eq!(m.selected_row().unwrap().name, "f7");
    }

    #[test]
    fn keys_move_the_cursor_within_the_rows() {
        let mut m = SearchModel::default();
        let g = search_of(&m.set_query("f")[0]).0;
        m.apply_rows(g, 0, 5, 5, rows(0, 5));
        m.move_cursor(1);
        assert_eq!(m.cursor, Some(0));
        m.move_cursor(3);
        assert_eq!(m.selected_row().unwrap().name, "f3");
        m.move_cursor(100);
        assert_eq!(m.cursor, Some(4));
        m.move_cursor(-100);
        assert_eq!(m.cursor, Some(0));
        assert_eq!(m.selected_paths(), vec![b"/r/f0".to_vec()]);
    }

    #[test]
    fn rows_from_before_the_daemon_went_away_are_marked_until_the_rerun() {
        let mut m = SearchModel::default();
        let g = search_of(&m.set_query("f")[0]).0;
        m.apply_rows(g, 0, 500, 5, rows(0, PAGE));
        m.click(3, false);
        // A keystroke while the daemon is away: its answer never comes.
        let g2 = search_of(&m.set_query("f1")[0]).0;
        m.went_away("fsindexd went away");
        assert!(!m.busy(), "nothing is on its way");
        assert_eq!(m.outdated.as_deref(), Some("fsindexd went away"));
        assert_eq!(m.results.total, 500, "the rows stay, marked");
        // A failed search is not a malformed query.
        m.apply_error(g2, "transport error", false);
        assert!(m.error.is_none());
        // Reconnected: the box's query is asked for anew.
        let r = m.rerun();
        let (g3, off, _, new) = search_of(&r[0]);
        assert!(g3 > g2 && off == 0 && new);
        assert!(m.outdated.is_none());
        m.apply_rows(g3, 0, 111, 5, rows(0, 111));
        assert_eq!(m.results.params.query, "f1");
        // The rows shown were the box's query: the pages in view again,
        // scroll and selection kept.
        m.click(5, false);
        m.went_away("gone");
        let r = m.rerun();
        let (g4, ..) = search_of(&r[0]);
        m.apply_rows(g4, 0, 111, 5, rows(0, 111));
        assert_eq!(m.selected_row().unwrap().name, "f5");
    }

    #[test]
    fn an_order_lasts_for_edits_of_its_query_then_goes_back_to_relevance() {
        let mut m = SearchModel::default();
        m.set_query("report");
        let r = m.header_clicked(SortKey::Size);
        assert!(matches!(&r[0], Request::Search { params, .. }
            if params.sort == SortKey::Size && !params.reverse));
        m.header_clicked(SortKey::Size);
        assert!(m.reverse);
        // A word added, a letter taken back: the same query, same order.
        m.set_query("report 2025");
        m.set_query("report 202");
        assert_eq!((m.sort, m.reverse), (SortKey::Size, true));
        // Another query (Ctrl+L and typing replaces the text): relevance.
        let r = m.set_query("alpha");
        assert!(matches!(&r[0], Request::Search { params, .. }
            if params.sort == SortKey::Relevance));
        // The third click on a header is relevance again.
        m.header_clicked(SortKey::Name);
        m.header_clicked(SortKey::Name);
        m.header_clicked(SortKey::Name);
        assert_eq!((m.sort, m.reverse), (SortKey::Relevance, false));
        // Pinned: kept for every query, even an emptied box.
        m.header_clicked(SortKey::Mtime);
        m.pinned = true;
        m.set_query("");
        m.set_query("beta");
        assert_eq!(m.sort, SortKey::Mtime);
    }

    #[test]
    fn shift_click_selects_a_range_and_home_end_go_to_the_ends() {
        let mut m = SearchModel::default();
        let g = search_of(&m.set_query("f")[0]).0;
        m.apply_rows(g, 0, 50, 5, rows(0, 50));
        m.click(10, false);
        m.click_range(13, false);
        let names = |m: &SearchModel| -> Vec<String> {
            m.selection
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect()
        };
        assert_eq!(names(&m), ["/r/f10", "/r/f11", "/r/f12", "/r/f13"]);
        assert_eq!(m.cursor, Some(13));
        // From the same anchor, upwards: the range replaces the last one.
        m.click_range(8, false);
        assert_eq!(names(&m), ["/r/f9", "/r/f10", "/r/f8"]);
        // Ctrl+Shift adds a range.
        m.click(20, true);
        m.click_range(21, true);
        assert_eq!(m.selection.len(), 5);
        m.cursor_to_end(true);
        assert_eq!((m.cursor, names(&m)), (Some(49), vec!["/r/f49".to_owned()]));
        m.cursor_to_end(false);
        assert_eq!(m.cursor, Some(0));
    }

    #[test]
    fn an_empty_query_clears_the_table() {
        let mut m = SearchModel::default();
        let g = search_of(&m.set_query("f")[0]).0;
        m.apply_rows(g, 0, 5, 5, rows(0, 5));
        let r = m.set_query("  ");
        assert!(matches!(r[0], Request::CancelSearch));
        assert_eq!(m.results.total, 0);
        assert!(!m.busy());
    }
}
