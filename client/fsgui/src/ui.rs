//! Drawing the window: the view switcher and query box, the results table,
//! the disk-usage bars and treemap, the duplicates list, the status bar.
//! Everything here reads the models and turns clicks and keys into their
//! reducers' calls; nothing here talks to the daemon.

use std::time::Duration;

use egui::text::{CCursorRange, LayoutJob};
use egui::{
    Align, Align2, Color32, FontId, Key, Label, Layout, Modifiers, RichText, Sense, Stroke,
    StrokeKind, TextFormat, Ui, vec2,
};
use egui_extras::{Column, TableBuilder};

use crate::app::{Action, App, View};
use crate::backend::{RowKind, SortKey, Usage};
use crate::treemap::squarify;

/// Height of a results row.
pub const ROW_HEIGHT: f32 = 20.0;
/// The query box's id (Ctrl+L focuses it).
pub fn query_id() -> egui::Id {
    egui::Id::unique("fsgui-query")
}

/// 1024-based sizes, as `du -h`: "1.5 KiB".
pub fn size(n: u64) -> String {
    humansize::format_size(n, humansize::BINARY)
}

/// 1,234,567.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Local date and time to the minute.
pub fn when(ns: i64) -> String {
    let Ok(t) = jiff::Timestamp::from_nanosecond(i128::from(ns)) else {
        return String::new();
    };
    let zoned = t.to_zoned(jiff::tz::TimeZone::system());
    zoned.strftime("%Y-%m-%d %H:%M").to_string()
}

fn icon(kind: RowKind) -> &'static str {
    match kind {
        RowKind::Folder => "📁",
        RowKind::Symlink => "🔗",
        RowKind::Special => "⚙",
        RowKind::Image => "🖼",
        RowKind::Audio => "🎵",
        RowKind::Video => "🎞",
        RowKind::Archive => "📦",
        RowKind::Code => "🖹",
        RowKind::Document => "🗐",
        RowKind::Text => "📄",
        RowKind::File => "🗋",
    }
}

/// Treemap and bar colours by kind, readable in light and dark themes.
fn kind_color(kind: RowKind, dark: bool) -> Color32 {
    let (r, g, b) = match kind {
        RowKind::Folder => (70, 130, 200),
        RowKind::Image => (200, 120, 60),
        RowKind::Audio => (170, 90, 190),
        RowKind::Video => (200, 70, 90),
        RowKind::Archive => (150, 120, 80),
        RowKind::Code => (60, 160, 120),
        RowKind::Document => (210, 170, 50),
        RowKind::Text => (120, 170, 70),
        RowKind::Symlink | RowKind::Special => (140, 140, 140),
        RowKind::File => (110, 120, 140),
    };
    let c = Color32::from_rgb(r, g, b);
    if dark { c.gamma_multiply(0.85) } else { c }
}

impl App {
    /// Draws one frame (eframe's `App::ui` and the kittest harness call this).
    pub fn ui(&mut self, ui: &mut Ui) {
        self.frames += 1;
        self.pump();
        self.expire_notice();
        let ctx = ui.ctx().clone();
        self.keys(&ctx);
        egui::Panel::top("fsgui-top").show(ui, |ui| self.top_bar(ui));
        egui::Panel::bottom("fsgui-status").show(ui, |ui| self.status_bar(ui));
        egui::CentralPanel::default_margins().show(ui, |ui| match self.view {
            View::Search => self.results_table(ui),
            View::DiskUsage => self.du_view(ui),
            View::Duplicates => self.dupes_view(ui),
        });
        if self.notice.is_some() || self.search.busy() {
            ctx.request_repaint_after(Duration::from_millis(250));
        }
    }

    /// Keyboard: arrows, Page Up/Down, Enter, Esc, Ctrl+L. Consumed before
    /// the query box sees them, so the box keeps the focus while the
    /// selection moves (as in Everything).
    fn keys(&mut self, ctx: &egui::Context) {
        let ctrl_l = ctx.input_mut(|i| i.consume_key(Modifiers::COMMAND, Key::L));
        if ctrl_l {
            self.show(View::Search);
            self.focus_query = true;
            self.select_query = true;
            return;
        }
        if self.view != View::Search || ctx.any_popup_open() {
            return;
        }
        let page = self.search.page_rows();
        let (down, up, pg_down, pg_up, enter, esc) = ctx.input_mut(|i| {
            (
                i.consume_key(Modifiers::NONE, Key::ArrowDown),
                i.consume_key(Modifiers::NONE, Key::ArrowUp),
                i.consume_key(Modifiers::NONE, Key::PageDown),
                i.consume_key(Modifiers::NONE, Key::PageUp),
                i.consume_key(Modifiers::NONE, Key::Enter),
                i.consume_key(Modifiers::NONE, Key::Escape),
            )
        });
        let delta =
            i64::from(down) - i64::from(up) + page * (i64::from(pg_down) - i64::from(pg_up));
        if delta != 0 {
            self.search.move_cursor(delta);
        }
        if enter {
            let paths = self.search.selected_paths();
            if paths.is_empty() {
                self.remember_query();
            } else {
                self.act(ctx, Action::Open, paths);
            }
        }
        if esc {
            if self.search.query.is_empty() {
                self.search.selection.clear();
                self.search.cursor = None;
            } else {
                self.type_query("");
            }
            self.focus_query = true;
        }
    }

    fn top_bar(&mut self, ui: &mut Ui) {
        ui.add_space(4.0);
        ui.horizontal(|ui| {
            for (view, label) in [
                (View::Search, "🔍 Search"),
                (View::DiskUsage, "🖴 Disk usage"),
                (View::Duplicates, "🗐 Duplicates"),
            ] {
                if ui.selectable_label(self.view == view, label).clicked() && self.view != view {
                    self.show(view);
                }
            }
        });
        if self.view == View::Search {
            self.query_row(ui);
        }
        ui.add_space(2.0);
    }

    fn query_row(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            let label = ui.label("Search");
            let width = (ui.available_width() - 80.0).max(100.0);
            let edit = egui::TextEdit::singleline(&mut self.search.query)
                .id(query_id())
                .hint_text("tax 2025   ext:pdf size:>1mb   kind:image dm:thisyear   !draft   a|b")
                .desired_width(width);
            let response = ui.add(edit).labelled_by(label.id);
            if response.changed() {
                let q = self.search.query.clone();
                self.type_query(&q);
            }
            if std::mem::take(&mut self.focus_query) {
                response.request_focus();
            }
            if std::mem::take(&mut self.select_query)
                && let Some(mut state) = egui::TextEdit::load_state(ui.ctx(), query_id())
            {
                state
                    .cursor
                    .set_char_range(Some(CCursorRange::select_all_str(&self.search.query)));
                state.store(ui.ctx(), query_id());
            }
            let saved = self.settings.is_saved(&self.search.query);
            if ui
                .button(if saved { "★" } else { "☆" })
                .on_hover_text(if saved {
                    "Remove from the saved searches"
                } else {
                    "Save this search"
                })
                .clicked()
            {
                self.toggle_saved();
            }
            let mut chosen = None;
            ui.menu_button("🕘", |ui| {
                ui.label(RichText::new("Saved searches").strong());
                if self.settings.saved.is_empty() {
                    ui.weak("none yet: ☆ saves the query");
                }
                for q in &self.settings.saved {
                    if ui.button(q).clicked() {
                        chosen = Some(q.clone());
                    }
                }
                ui.separator();
                ui.label(RichText::new("Recent").strong());
                for q in self.settings.history.iter().take(20) {
                    if ui.button(q).clicked() {
                        chosen = Some(q.clone());
                    }
                }
            })
            .response
            .on_hover_text("Saved searches and history");
            if let Some(q) = chosen {
                self.type_query(&q);
                self.focus_query = true;
            }
        });
        self.query_feedback(ui);
    }

    /// The match count and the daemon's time, or the malformed query.
    fn query_feedback(&mut self, ui: &mut Ui) {
        let error_color = ui.visuals().error_fg_color;
        if let Some(e) = &self.search.error {
            ui.horizontal_wrapped(|ui| {
                if let Some(bad) = e.bad.clone() {
                    let mut job = LayoutJob::default();
                    let normal = TextFormat {
                        color: ui.visuals().text_color(),
                        font_id: FontId::monospace(13.0),
                        ..TextFormat::default()
                    };
                    let marked = TextFormat {
                        color: error_color,
                        underline: Stroke::new(2.0, error_color),
                        background: error_color.gamma_multiply(0.15),
                        ..normal.clone()
                    };
                    job.append(&e.query[..bad.start], 0.0, normal.clone());
                    job.append(&e.query[bad.clone()], 0.0, marked);
                    job.append(&e.query[bad.end..], 0.0, normal);
                    ui.label(job);
                }
                ui.colored_label(error_color, format!("⚠ {}", e.message));
            });
            return;
        }
        let r = &self.search.results;
        ui.horizontal(|ui| {
            if r.params.query.is_empty() {
                ui.weak("Type to search every indexed name; results update as you type.");
            } else {
                let matches = match r.total {
                    1 => "1 match".to_owned(),
                    n => format!("{} matches", count(n)),
                };
                ui.label(matches);
                ui.weak(format!(
                    "in {:.1} ms (daemon)",
                    r.elapsed_us as f64 / 1000.0
                ));
            }
            if self.search.busy() {
                ui.spinner();
            }
        });
    }

    fn results_table(&mut self, ui: &mut Ui) {
        ui.style_mut().interaction.selectable_labels = false;
        let total = self.search.results.total;
        let mut drawn: Option<(u64, u64)> = None;
        let mut click: Option<(u64, bool)> = None;
        let mut open: Option<u64> = None;
        let mut menu: Option<(u64, Action)> = None;
        let mut sort_click: Option<SortKey> = None;
        let (sort, reverse) = (
            self.search.results.params.sort,
            self.search.results.params.reverse,
        );
        let mut table = TableBuilder::new(ui)
            .id_salt(("fsgui-results", self.search.results.epoch))
            .striped(true)
            .sense(Sense::click())
            .cell_layout(Layout::left_to_right(Align::Center))
            .column(
                Column::initial(280.0)
                    .at_least(80.0)
                    .resizable(true)
                    .clip(true),
            )
            .column(Column::remainder().at_least(80.0).clip(true))
            .column(Column::initial(90.0).at_least(50.0).resizable(true))
            .column(Column::initial(130.0).at_least(60.0))
            .min_scrolled_height(0.0)
            .auto_shrink([false, false]);
        if std::mem::take(&mut self.search.scroll_to_cursor)
            && let Some(c) = self.search.cursor
        {
            table = table.scroll_to_row(c as usize, None);
        }
        if let Some(y) = self.search.scroll_offset.take() {
            table = table.vertical_scroll_offset(y);
        }
        let results = &self.search.results;
        let search = &self.search;
        table
            .header(22.0, |mut header| {
                for (title, key) in [
                    ("Name", SortKey::Name),
                    ("Folder", SortKey::Path),
                    ("Size", SortKey::Size),
                    ("Modified", SortKey::Mtime),
                ] {
                    header.col(|ui| {
                        let text = if sort == key {
                            format!("{title} {}", if reverse { "⬆" } else { "⬇" })
                        } else {
                            title.to_owned()
                        };
                        let b = egui::Button::new(RichText::new(text).strong()).frame(false);
                        if ui.add(b).on_hover_text("Sort (again: reverse)").clicked() {
                            sort_click = Some(key);
                        }
                    });
                }
            })
            .body(|body| {
                body.rows(ROW_HEIGHT, total as usize, |mut row| {
                    let i = row.index() as u64;
                    drawn = Some(drawn.map_or((i, i), |(a, b)| (a.min(i), b.max(i))));
                    let Some(r) = results.row(i) else {
                        row.col(|ui| {
                            ui.weak("…");
                        });
                        for _ in 0..3 {
                            row.col(|_| {});
                        }
                        return;
                    };
                    row.set_selected(search.is_selected(r) || search.cursor == Some(i));
                    row.col(|ui| {
                        ui.label(icon(r.kind));
                        ui.add(Label::new(&r.name).truncate());
                        if r.sensitive {
                            ui.label("⚠").on_hover_text("matches a sensitive pattern");
                        }
                    });
                    row.col(|ui| {
                        ui.add(Label::new(RichText::new(&r.folder).weak()).truncate());
                    });
                    row.col(|ui| {
                        ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                            if !r.kind.is_folder() {
                                ui.label(size(r.size));
                            }
                        });
                    });
                    row.col(|ui| {
                        ui.label(when(r.mtime_ns));
                    });
                    let response = row.response();
                    if response.double_clicked() {
                        open = Some(i);
                    } else if response.clicked() {
                        let ctrl = response.ctx.input(|inp| inp.modifiers.command);
                        click = Some((i, ctrl));
                    }
                    response.context_menu(|ui| {
                        for (label, action) in [
                            ("Open", Action::Open),
                            ("Reveal in file manager", Action::Reveal),
                            ("Copy path", Action::CopyPath),
                            ("Copy name", Action::CopyName),
                            ("Copy selected as a file list", Action::CopyList),
                        ] {
                            if ui.button(label).clicked() {
                                menu = Some((i, action));
                                ui.close();
                            }
                        }
                    });
                });
            });
        let ctx = ui.ctx().clone();
        if let Some((i, ctrl)) = click {
            self.search.click(i, ctrl);
        }
        if let Some(i) = open {
            self.search.click(i, false);
            let paths = self.search.selected_paths();
            self.act(&ctx, Action::Open, paths);
        }
        if let Some((i, action)) = menu {
            if !self
                .search
                .selection
                .iter()
                .any(|p| self.search.results.row(i).is_some_and(|r| r.path == *p))
            {
                self.search.click(i, false);
            }
            let paths = match action {
                Action::CopyList => self.search.selected_paths(),
                _ => self
                    .search
                    .results
                    .row(i)
                    .map(|r| vec![r.path.clone()])
                    .unwrap_or_default(),
            };
            self.act(&ctx, action, paths);
        }
        if let Some(key) = sort_click {
            let reverse = self.search.sort == key && !self.search.reverse;
            let r = self.search.set_sort(key, reverse);
            self.send(r);
        }
        let r = self.search.visible_rows(drawn);
        self.send(r);
        if drawn.is_some_and(|(a, _)| self.search.results.row(a).is_some()) || total == 0 {
            self.search.painted();
        }
    }

    fn status_bar(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            match (&self.connection, &self.status) {
                (Some(Err(e)), _) => {
                    ui.colored_label(ui.visuals().error_fg_color, format!("⚠ not connected: {e}"));
                }
                (_, Some(s)) => {
                    if s.state == "ready" {
                        let (dot, _) = ui.allocate_exact_size(vec2(10.0, 10.0), Sense::hover());
                        ui.painter().circle_filled(
                            dot.center(),
                            4.0,
                            Color32::from_rgb(60, 170, 90),
                        );
                        ui.label("ready");
                    } else {
                        ui.spinner();
                        let scanned: u64 = s.roots.iter().map(|r| r.scanned).sum();
                        ui.label(format!("scanning: {} entries so far", count(scanned)));
                    }
                    ui.separator();
                    ui.label(format!("{} entries", count(s.entries)));
                    ui.separator();
                    let roots: Vec<String> = s
                        .roots
                        .iter()
                        .map(|r| String::from_utf8_lossy(&r.path).into_owned())
                        .collect();
                    ui.label(match roots.len() {
                        1 => format!("root {}", roots[0]),
                        n => format!("{n} roots"),
                    })
                    .on_hover_text(roots.join("\n"));
                    ui.separator();
                    let watch = s
                        .roots
                        .iter()
                        .map(|r| r.watch.as_str())
                        .find(|w| *w != "live")
                        .unwrap_or("live");
                    ui.label(if s.watching {
                        format!("watching: {watch}")
                    } else {
                        "not watching".to_owned()
                    });
                    for n in &s.notices {
                        ui.separator();
                        ui.colored_label(ui.visuals().warn_fg_color, n);
                    }
                }
                _ => {
                    ui.spinner();
                    ui.label("connecting to fsindexd…");
                }
            }
            if let Some(n) = &self.notice {
                ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                    ui.label(&n.text);
                });
            }
        });
    }

    fn du_view(&mut self, ui: &mut Ui) {
        let mut go: Option<Vec<u8>> = None;
        let mut go_root: Option<Vec<u8>> = None;
        ui.horizontal(|ui| {
            let crumbs = self.du.breadcrumb();
            if ui
                .add_enabled(crumbs.len() > 1, egui::Button::new("⬆ Up"))
                .clicked()
            {
                go = crumbs
                    .get(crumbs.len().wrapping_sub(2))
                    .map(|c| c.1.clone());
            }
            for (i, (label, path)) in crumbs.iter().enumerate() {
                if i > 0 {
                    ui.weak("›");
                }
                if i + 1 == crumbs.len() {
                    ui.strong(label);
                } else if ui.link(label).clicked() {
                    go = Some(path.clone());
                }
            }
            let roots: Vec<Vec<u8>> = self
                .status
                .as_ref()
                .map(|s| s.roots.iter().map(|r| r.path.clone()).collect())
                .unwrap_or_default();
            if roots.len() > 1 {
                ui.separator();
                egui::ComboBox::from_id_salt("fsgui-du-root")
                    .selected_text("Root")
                    .show_ui(ui, |ui| {
                        for r in roots {
                            if ui.button(String::from_utf8_lossy(&r)).clicked() {
                                go_root = Some(r);
                            }
                        }
                    });
            }
            if self.du.loading {
                ui.spinner();
            }
        });
        if let Some(root) = go_root {
            let r = self.du.open(&root, &root);
            self.send(r);
        } else if let Some(path) = go {
            let root = self.du.root.clone();
            let r = self.du.open(&root, &path);
            self.send(r);
        }
        if let Some(e) = &self.du.error {
            ui.colored_label(ui.visuals().error_fg_color, format!("⚠ {e}"));
        }
        let Some(answer) = self.du.answer.clone() else {
            if self.du.path.is_none() {
                ui.weak("waiting for the daemon's roots…");
            }
            return;
        };
        let t = &answer.total;
        ui.label(format!(
            "{} allocated · {} apparent · {} files · {} folders{}",
            size(t.bytes),
            size(t.apparent_bytes),
            count(t.files),
            count(t.dirs),
            if t.incomplete {
                " · incomplete: some folders could not be read"
            } else {
                ""
            }
        ));
        ui.separator();
        let mut enter: Option<Usage> = None;
        let parent = t.bytes.max(1) as f64;
        let dark = ui.visuals().dark_mode;
        ui.columns(2, |cols| {
            let ui = &mut cols[0];
            ui.style_mut().interaction.selectable_labels = false;
            let n = answer.children.len();
            egui::ScrollArea::vertical()
                .id_salt("fsgui-du-bars")
                .auto_shrink([false, false])
                .show_rows(ui, 22.0, n + 1, |ui, range| {
                    for i in range {
                        let Some(c) = answer.children.get(i) else {
                            let more = answer.children_total.saturating_sub(n as u64);
                            if more > 0 {
                                ui.weak(format!("… {} more", count(more)));
                            }
                            continue;
                        };
                        let share = c.bytes as f64 / parent;
                        let r = ui.horizontal(|ui| {
                            let (rect, bar) =
                                ui.allocate_exact_size(vec2(110.0, 14.0), Sense::click());
                            let p = ui.painter();
                            p.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
                            let mut fill = rect;
                            fill.set_width(rect.width() * share.clamp(0.0, 1.0) as f32);
                            p.rect_filled(fill, 2.0, kind_color(c.kind, dark));
                            ui.add_sized([72.0, 18.0], Label::new(size(c.bytes)));
                            ui.add_sized(
                                [48.0, 18.0],
                                Label::new(RichText::new(format!("{:.1}%", share * 100.0)).weak()),
                            );
                            ui.label(icon(c.kind));
                            let name = ui.add(Label::new(&c.name).sense(Sense::click()).truncate());
                            if c.incomplete {
                                ui.label("⚠")
                                    .on_hover_text("incomplete: a folder could not be read");
                            }
                            bar.union(name)
                        });
                        let resp = r.inner.on_hover_text(format!(
                            "{}\n{} allocated, {} apparent\n{} files, {} folders",
                            String::from_utf8_lossy(&c.path),
                            size(c.bytes),
                            size(c.apparent_bytes),
                            count(c.files),
                            count(c.dirs)
                        ));
                        if resp.clicked() && c.kind.is_folder() {
                            enter = Some(c.clone());
                        }
                    }
                });
            let ui = &mut cols[1];
            if let Some(c) = treemap(ui, &answer.children, dark) {
                enter = Some(c);
            }
        });
        if let Some(c) = enter {
            let r = self.du.enter(&c);
            self.send(r);
        }
    }

    fn dupes_view(&mut self, ui: &mut Ui) {
        let mut again = false;
        ui.horizontal(|ui| {
            if ui
                .add_enabled(!self.dupes.running, egui::Button::new("⟳ Search again"))
                .clicked()
            {
                again = true;
            }
            if self.dupes_stale && !self.dupes.running {
                ui.weak("files changed since this search");
            }
        });
        if again {
            self.dupes_stale = false;
            self.expanded_groups.clear();
            let r = self.dupes.start();
            self.send(r);
        }
        if let Some(p) = &self.dupes.progress {
            let (text, done) = match p.stage.as_str() {
                "partial" => (
                    "hashing heads and tails",
                    p.files_done as f32 / p.files_total.max(1) as f32,
                ),
                "full" => (
                    "hashing contents",
                    p.bytes_done as f32 / p.bytes_total.max(1) as f32,
                ),
                _ => ("grouping by size", 0.0),
            };
            ui.add(egui::ProgressBar::new(done).show_percentage().text(format!(
                "{text}: {} of {} files",
                count(p.files_done),
                count(p.files_total)
            )));
        } else if self.dupes.running {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("looking for files of equal size…");
            });
        }
        if let Some(e) = &self.dupes.error {
            ui.colored_label(ui.visuals().error_fg_color, format!("⚠ {e}"));
        }
        if let Some(s) = &self.dupes.summary {
            ui.label(format!(
                "{} groups · {} reclaimable ({} allocated) · {} same-size files, {} read, {} hashes from the cache",
                count(s.groups),
                size(s.reclaimable_bytes),
                size(s.reclaimable_allocated_bytes),
                count(s.candidates),
                count(s.files_read),
                count(s.cache_hits)
            ));
        } else if !self.dupes.groups.is_empty() {
            ui.label(format!(
                "{} groups so far · {} reclaimable",
                count(self.dupes.groups.len() as u64),
                size(self.dupes.reclaimable())
            ));
        }
        ui.separator();
        ui.style_mut().interaction.selectable_labels = false;
        // One flat list of rows (group headers and the copies of expanded
        // groups), drawn only where visible.
        let mut rows: Vec<(usize, Option<usize>)> = Vec::new();
        for (g, group) in self.dupes.groups.iter().enumerate() {
            rows.push((g, None));
            if self.expanded_groups.contains(&g) {
                rows.extend((0..group.copies.len()).map(|c| (g, Some(c))));
            }
        }
        let mut toggle = None;
        let mut act: Option<(Action, Vec<u8>)> = None;
        egui::ScrollArea::vertical()
            .id_salt("fsgui-dupes")
            .auto_shrink([false, false])
            .show_rows(ui, 22.0, rows.len(), |ui, range| {
                for &(g, copy) in &rows[range] {
                    let group = &self.dupes.groups[g];
                    match copy {
                        None => {
                            let open = self.expanded_groups.contains(&g);
                            let header = format!(
                                "{} × {} copies · {} reclaimable",
                                size(group.size),
                                group.copies.len(),
                                size(group.reclaimable_bytes)
                            );
                            ui.horizontal(|ui| {
                                let sign = if open { "⏷" } else { "⏵" };
                                let a = ui.add(Label::new(sign).sense(Sense::click()));
                                let b = ui.add(
                                    Label::new(RichText::new(header).strong())
                                        .sense(Sense::click()),
                                );
                                ui.weak(format!(
                                    "blake3:{}",
                                    &group.hash[..group.hash.len().min(16)]
                                ));
                                if a.clicked() || b.clicked() {
                                    toggle = Some(g);
                                }
                            });
                        }
                        Some(c) => {
                            let paths = &group.copies[c];
                            let main = paths.first().cloned().unwrap_or_default();
                            ui.horizontal(|ui| {
                                ui.add_space(24.0);
                                if ui.small_button("Reveal").clicked() {
                                    act = Some((Action::Reveal, main.clone()));
                                }
                                let label = ui.add(
                                    Label::new(String::from_utf8_lossy(&main))
                                        .sense(Sense::click())
                                        .truncate(),
                                );
                                if label.double_clicked() {
                                    act = Some((Action::Open, main.clone()));
                                }
                                label.context_menu(|ui| {
                                    for (text, a) in [
                                        ("Open", Action::Open),
                                        ("Reveal in file manager", Action::Reveal),
                                        ("Copy path", Action::CopyPath),
                                    ] {
                                        if ui.button(text).clicked() {
                                            act = Some((a, main.clone()));
                                            ui.close();
                                        }
                                    }
                                });
                                if paths.len() > 1 {
                                    ui.weak(format!("+{} hard links", paths.len() - 1))
                                        .on_hover_text(
                                            paths[1..]
                                                .iter()
                                                .map(|p| String::from_utf8_lossy(p).into_owned())
                                                .collect::<Vec<_>>()
                                                .join("\n"),
                                        );
                                }
                            });
                        }
                    }
                }
            });
        if let Some(g) = toggle
            && !self.expanded_groups.remove(&g)
        {
            self.expanded_groups.insert(g);
        }
        if let Some((a, p)) = act {
            let ctx = ui.ctx().clone();
            self.act(&ctx, a, vec![p]);
        }
    }
}

/// A squarified treemap of `children` filling the rest of `ui`; returns the
/// folder clicked, if any.
fn treemap(ui: &mut Ui, children: &[Usage], dark: bool) -> Option<Usage> {
    let (response, painter) = ui.allocate_painter(ui.available_size(), Sense::click());
    let area = response.rect;
    let values: Vec<u64> = children.iter().map(|c| c.bytes).collect();
    let rects = squarify(&values, area);
    let hover = response
        .hover_pos()
        .and_then(|p| rects.iter().position(|r| r.contains(p)));
    let bg = ui.visuals().panel_fill;
    let text = if dark { Color32::WHITE } else { Color32::BLACK };
    for (i, (c, r)) in children.iter().zip(&rects).enumerate() {
        if r.width() <= 0.0 || r.height() <= 0.0 {
            continue;
        }
        let mut fill = kind_color(c.kind, dark);
        if c.kind.is_folder() {
            // Neighbouring folders in shades, so their edges read.
            fill = fill.gamma_multiply(0.7 + 0.1 * (i % 4) as f32);
        }
        if hover == Some(i) {
            fill = fill.gamma_multiply(1.25);
        }
        painter.rect_filled(*r, 2.0, fill);
        painter.rect_stroke(*r, 2.0, Stroke::new(1.0, bg), StrokeKind::Inside);
        if r.width() > 46.0 && r.height() > 16.0 {
            let label = format!("{}  {}", c.name, size(c.bytes));
            let clip = painter.with_clip_rect(r.shrink(2.0));
            clip.text(
                r.min + vec2(4.0, 3.0),
                Align2::LEFT_TOP,
                label,
                FontId::proportional(12.0),
                text,
            );
        }
    }
    let total: u64 = values.iter().sum();
    if let Some(c) = hover.and_then(|i| children.get(i)) {
        let share = c.bytes as f64 / total.max(1) as f64 * 100.0;
        response.clone().on_hover_text_at_pointer(format!(
            "{}{}\n{} ({share:.1}% of what is shown)\n{} files",
            c.name,
            if c.kind.is_folder() { "/" } else { "" },
            size(c.bytes),
            count(c.files)
        ));
    }
    if response.clicked()
        && let Some(c) = hover.and_then(|i| children.get(i))
        && c.kind.is_folder()
    {
        return Some(c.clone());
    }
    None
}

/// Every symbol the window draws, for the glyph test.
#[cfg(test)]
const SYMBOLS: &[&str] = &[
    "…", "›", "·", "×", "⏷", "⏵", "★", "☆", "⚙", "⚠", "⟳", "⬆", "⬇", "🎞", "🎵", "📁", "📦", "🔍",
    "🔗", "🕘", "🖴", "🖹", "🖼", "🗋", "🗐", "📄",
];

#[cfg(test)]
mod tests {
    /// egui 0.37 has no system font fallback here: a symbol missing from
    /// the bundled fonts would be drawn as a box.
    #[test]
    fn every_symbol_has_a_glyph() {
        let ctx = egui::Context::default();
        ctx.set_missing_glyph_policy(egui::MissingGlyphPolicy::Panic);
        for _ in 0..2 {
            let mut out = ctx.run_ui(egui::RawInput::default(), |ui| {
                for s in super::SYMBOLS {
                    ui.label(*s);
                }
            });
            out.textures_delta.clear();
        }
    }

    #[test]
    fn counts_have_separators() {
        assert_eq!(super::count(0), "0");
        assert_eq!(super::count(1234567), "1,234,567");
        assert_eq!(super::size(1536), "1.50 KiB");
    }
}
