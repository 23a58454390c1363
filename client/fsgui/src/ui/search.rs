//! The search view: the keyboard (the query box keeps the focus while the
//! selection moves), the query box with its feedback and saved searches,
//! and the results table, drawn only where visible.

use egui::text::{CCursorRange, LayoutJob};
use egui::{Align, FontId, Key, Label, Layout, Modifiers, RichText, Sense, Stroke, TextFormat, Ui};
use egui_extras::{Column, TableBuilder};

use super::{count, icon, size, when};
use crate::app::{Action, App, View};
use crate::backend::SortKey;

/// What the four columns always there need at first (name, a folder,
/// size, date, and the spaces between), in points.
pub const BASE_WIDTH: f32 = 280.0 + 160.0 + 90.0 + 130.0 + 4.0 * 8.0;
/// Height of a results row.
pub const ROW_HEIGHT: f32 = 20.0;
/// The query box's id (Ctrl+L focuses it).
pub fn query_id() -> egui::Id {
    egui::Id::unique("fsgui-query")
}

impl App {
    /// Keyboard: arrows, Page Up/Down, Home/End, Enter, Esc, Ctrl+L.
    /// Consumed before the query box sees them, so the box keeps the focus
    /// while the selection moves (as in Everything).
    ///
    /// Ctrl+L and Esc give the box the focus at once, in this frame, before
    /// it reads the keys typed after them (which may arrive in the same
    /// frame): a focus asked for after the box was drawn would come a frame
    /// late, and those keys would be lost.
    pub(super) fn keys(&mut self, ctx: &egui::Context) {
        let ctrl_l = ctx.input_mut(|i| i.consume_key(Modifiers::COMMAND, Key::L));
        if ctrl_l && self.dialog.is_none() {
            self.show(View::Search);
            self.focus_query = true;
            self.select_query = true;
            return;
        }
        if self.dialog.is_some() || ctx.any_popup_open() {
            return;
        }
        if self.view == View::DiskUsage {
            self.du_keys(ctx);
            return;
        }
        if self.view != View::Search {
            return;
        }
        let page = self.search.page_rows();
        // Home/End move in the rows once one is selected (in the text
        // before that); with Ctrl, always.
        let rows_keys = self.search.cursor.is_some();
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
        let (home, end) = ctx.input_mut(|i| {
            let home = i.consume_key(Modifiers::COMMAND, Key::Home)
                || (rows_keys && i.consume_key(Modifiers::NONE, Key::Home));
            let end = i.consume_key(Modifiers::COMMAND, Key::End)
                || (rows_keys && i.consume_key(Modifiers::NONE, Key::End));
            (home, end)
        });
        let delta =
            i64::from(down) - i64::from(up) + page * (i64::from(pg_down) - i64::from(pg_up));
        if delta != 0 {
            self.search.move_cursor(delta);
        }
        if home || end {
            self.search.cursor_to_end(end);
        }
        // Delete and F2 act on the rows once one is selected (Delete in
        // the text before that).
        let (delete, f2) = ctx.input_mut(|i| {
            (
                rows_keys && i.consume_key(Modifiers::NONE, Key::Delete),
                i.consume_key(Modifiers::NONE, Key::F2),
            )
        });
        if delete {
            let paths = self.search.selected_paths();
            self.act(ctx, Action::Trash, paths);
        }
        if f2 && let Some(r) = self.search.selected_row() {
            let path = vec![r.path.clone()];
            self.act(ctx, Action::Rename, path);
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
            // egui drops the focus on Esc as the frame starts: take it back
            // now, before the box reads what was typed after it.
            self.focus_query = true;
        }
        if std::mem::take(&mut self.focus_query) && self.dialog.is_none() {
            ctx.memory_mut(|m| m.request_focus(query_id()));
        }
    }

    /// The disk-usage view's keys: Up/Down over the bars, Enter into a
    /// folder (or opens a file), Backspace or Alt+Up to the folder above,
    /// Delete to the trash (after the question).
    fn du_keys(&mut self, ctx: &egui::Context) {
        let (down, up, enter, back, delete) = ctx.input_mut(|i| {
            (
                i.consume_key(Modifiers::NONE, Key::ArrowDown),
                i.consume_key(Modifiers::NONE, Key::ArrowUp),
                i.consume_key(Modifiers::NONE, Key::Enter),
                i.consume_key(Modifiers::NONE, Key::Backspace)
                    || i.consume_key(Modifiers::ALT, Key::ArrowUp),
                i.consume_key(Modifiers::NONE, Key::Delete),
            )
        });
        let delta = i64::from(down) - i64::from(up);
        if delta != 0 {
            self.du.move_cursor(delta);
        }
        if back {
            let r = self.du.up();
            self.send(r);
        }
        let Some(c) = self.du.selected().cloned() else {
            return;
        };
        if enter {
            if c.kind.is_folder() {
                let r = self.du.enter(&c);
                self.send(r);
            } else {
                self.act(ctx, Action::Open, vec![c.path.clone()]);
            }
        }
        if delete {
            self.act(ctx, Action::Trash, vec![c.path]);
        }
    }

    pub(super) fn query_row(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            let label = ui.label("Search");
            let width = (ui.available_width() - 260.0).max(100.0);
            // Focus and selection before the box is drawn: it reads this
            // frame's keys with them (see `keys`).
            if std::mem::take(&mut self.focus_query) && self.dialog.is_none() {
                ui.memory_mut(|m| m.request_focus(query_id()));
            }
            if std::mem::take(&mut self.query_cursor_to_end) {
                let mut state =
                    egui::TextEdit::load_state(ui.ctx(), query_id()).unwrap_or_default();
                let end = egui::text::CCursor::new(self.search.query.chars().count());
                state.cursor.set_char_range(Some(CCursorRange::one(end)));
                state.store(ui.ctx(), query_id());
            }
            if std::mem::take(&mut self.select_query) {
                let mut state =
                    egui::TextEdit::load_state(ui.ctx(), query_id()).unwrap_or_default();
                state
                    .cursor
                    .set_char_range(Some(CCursorRange::select_all_str(&self.search.query)));
                state.store(ui.ctx(), query_id());
            }
            let mut layouter = query_layouter;
            let edit = egui::TextEdit::singleline(&mut self.search.query)
                .layouter(&mut layouter)
                .id(query_id())
                .hint_text("tax 2025   ext:pdf size:>1mb   kind:image dm:thisyear   !draft   a|b")
                .desired_width(width);
            let response = ui.add(edit).labelled_by(label.id);
            if response.changed() {
                let q = self.search.query.clone();
                self.type_query(&q);
            }
            let mut ignore = self.search.ignore_accents;
            let hint = if ignore {
                "Accents ignored: cafe finds café (click to match accents exactly)"
            } else {
                "Accents matched exactly (click to ignore them: cafe finds café)"
            };
            if ui
                .toggle_value(&mut ignore, "ä=a")
                .on_hover_text(hint)
                .changed()
            {
                self.set_ignore_accents(ignore);
            }
            ui.toggle_value(&mut self.preview_shown, "Preview")
                .on_hover_text("The selected row's text or picture beside the results");
            let saved = self.shared.saved_as(&self.search.query).is_some();
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
                if self.shared.saved.is_empty() {
                    ui.weak("none yet: ☆ saves the query");
                }
                // `@name` runs it, here as in fsctl and MCP.
                for (name, q) in &self.shared.saved {
                    if ui
                        .button(format!("@{name}"))
                        .on_hover_text(q.as_str())
                        .clicked()
                    {
                        chosen = Some(format!("@{name}"));
                    }
                }
                ui.separator();
                ui.label(RichText::new("Recent").strong());
                for q in self.shared.history.iter().take(20) {
                    if ui.button(q).clicked() {
                        chosen = Some(q.clone());
                    }
                }
            })
            .response
            .on_hover_text("Saved searches and history");
            self.columns_menu(ui);
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
        if let Some(why) = &self.search.outdated {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!("⚠ {why}: the rows below are from before, and may be out of date"),
            );
        }
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
                ui.weak("searching…");
            }
        });
        self.order_line(ui);
    }

    /// The order shown, a way back to relevance, and the pin that keeps it
    /// for new queries; only once an order was chosen.
    fn order_line(&mut self, ui: &mut Ui) {
        let s = &mut self.search;
        if s.sort == SortKey::Relevance && !s.pinned {
            return;
        }
        let mut relevance = false;
        ui.horizontal(|ui| {
            let by = match s.sort {
                SortKey::Relevance => "relevance",
                SortKey::Name => "name",
                SortKey::Path => "folder",
                SortKey::Size => "size",
                SortKey::Mtime => "date modified",
            };
            let dir = if s.sort == SortKey::Relevance {
                ""
            } else if s.reverse {
                ", reversed"
            } else {
                ""
            };
            ui.weak(format!("Sorted by {by}{dir}"));
            if s.sort != SortKey::Relevance && ui.small_button("Back to relevance").clicked() {
                relevance = true;
            }
            ui.checkbox(&mut s.pinned, "Keep this order for new queries");
        });
        if relevance {
            let r = self.search.set_sort(SortKey::Relevance, false);
            self.send(r);
            self.focus_query = true;
        }
    }

    pub(super) fn results_table(&mut self, ui: &mut Ui) {
        ui.style_mut().interaction.selectable_labels = false;
        let total = self.search.results.total;
        let mut drawn: Option<(u64, u64)> = None;
        // Row, Ctrl, Shift.
        let mut click: Option<(u64, bool, bool)> = None;
        let mut open: Option<u64> = None;
        let mut menu: Option<(u64, Action)> = None;
        let mut sort_click: Option<SortKey> = None;
        let (sort, reverse) = (
            self.search.results.params.sort,
            self.search.results.params.reverse,
        );
        // The optional columns on (media metadata, tags: see
        // `crate::details`), after the four that are always there.
        let extras = self.extras();
        // One table state for every query: column widths stay as dragged
        // (one per set of columns).
        let salt = if extras.is_empty() {
            "fsgui-results".to_owned()
        } else {
            let names: Vec<&str> = extras.iter().map(|e| e.title()).collect();
            format!("fsgui-results-{}", names.join("-"))
        };
        let mut table = TableBuilder::new(ui)
            .id_salt(salt)
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
            // With optional columns, as wide as they are (the view around
            // scrolls sideways); else the width there is.
            .auto_shrink([!extras.is_empty(), false]);
        for e in &extras {
            table = table.column(
                Column::initial(e.width())
                    .at_least(40.0)
                    .resizable(true)
                    .clip(true),
            );
        }
        if std::mem::take(&mut self.search.scroll_to_cursor)
            && let Some(c) = self.search.cursor
        {
            table = table.scroll_to_row(c as usize, None);
        }
        if let Some(y) = self.search.scroll_offset.take() {
            table = table.vertical_scroll_offset(y);
        } else if self.shown_epoch != self.search.results.epoch {
            // A new query's rows: from the top.
            self.shown_epoch = self.search.results.epoch;
            table = table.vertical_scroll_offset(0.0);
        }
        let results = &self.search.results;
        let search = &self.search;
        let details = &self.details;
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
                        let hint = "Sort (again: reversed; a third time: by relevance)";
                        if ui.add(b).on_hover_text(hint).clicked() {
                            sort_click = Some(key);
                        }
                    });
                }
                for e in &extras {
                    header.col(|ui| {
                        ui.label(RichText::new(e.title()).strong()).on_hover_text(
                            "From the file's own metadata (the Columns menu turns it off)",
                        );
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
                        for _ in 0..3 + extras.len() {
                            row.col(|_| {});
                        }
                        return;
                    };
                    row.set_selected(search.is_selected(r) || search.cursor == Some(i));
                    row.col(|ui| {
                        ui.label(icon(r.kind));
                        // Read out (and found by tests) as stored, drawn in
                        // display order.
                        ui.add(Label::new(marked(ui, &r.name, &r.marks)).truncate())
                            .widget_info(|| {
                                egui::WidgetInfo::labeled(egui::Role::Label, true, &r.name)
                            });
                        if r.sensitive {
                            ui.label("⚠").on_hover_text("matches a sensitive pattern");
                        }
                    });
                    row.col(|ui| {
                        let folder = crate::bidi::visual(&r.folder, &[]).map(|(d, _)| d);
                        let drawn = folder.as_deref().unwrap_or(&r.folder);
                        ui.add(Label::new(RichText::new(drawn).weak()).truncate())
                            .widget_info(|| {
                                egui::WidgetInfo::labeled(egui::Role::Label, true, &r.folder)
                            });
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
                    let known = details.get(r);
                    for e in &extras {
                        row.col(|ui| {
                            if let Some(d) = known {
                                ui.add(Label::new(e.cell(d)).truncate());
                            }
                        });
                    }
                    let response = row.response();
                    if response.double_clicked() {
                        open = Some(i);
                    } else if response.clicked() {
                        let m = response.ctx.input(|inp| inp.modifiers);
                        click = Some((i, m.command, m.shift));
                    } else if response.secondary_clicked() && !search.is_selected(r) {
                        // The menu is about this row: it is selected, and
                        // so highlighted, as in a file manager.
                        click = Some((i, false, false));
                    }
                    response.context_menu(|ui| {
                        if ui.button("Copy selected as a file list").clicked() {
                            menu = Some((i, Action::CopyList));
                            ui.close();
                        }
                        if let Some(a) = super::file_menu(ui, search.selection.len() <= 1) {
                            menu = Some((i, a));
                        }
                    });
                });
            });
        let ctx = ui.ctx().clone();
        if let Some((i, ctrl, shift)) = click {
            if shift {
                self.search.click_range(i, ctrl);
            } else {
                self.search.click(i, ctrl);
            }
        }
        if click.is_some() || open.is_some() || menu.is_some() || sort_click.is_some() {
            // Clicks in the table leave the keyboard in the query box.
            self.focus_query = true;
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
            let row = self.search.results.row(i);
            let paths = match action {
                Action::CopyList | Action::Trash | Action::OpenWith => self.search.selected_paths(),
                Action::SearchIn => row
                    .map(|r| vec![crate::actions::folder_of(&r.path, r.kind.is_folder())])
                    .unwrap_or_default(),
                _ => row.map(|r| vec![r.path.clone()]).unwrap_or_default(),
            };
            self.act(&ctx, action, paths);
        }
        if let Some(key) = sort_click {
            let r = self.search.header_clicked(key);
            self.send(r);
        }
        let r = self.search.visible_rows(drawn);
        self.send(r);
        if !extras.is_empty()
            && let Some((a, b)) = drawn
        {
            let rows: Vec<&crate::backend::Row> =
                (a..=b).filter_map(|i| self.search.results.row(i)).collect();
            let asked = self
                .details
                .wanted(rows.iter().copied(), std::time::Instant::now());
            if self.details.waiting(rows.iter().copied()) {
                // The daemon reads headers after the scan: look again.
                ctx.request_repaint_after(crate::details::RETRY);
            }
            self.ask_details(asked);
        }
        if drawn.is_some_and(|(a, _)| self.search.results.row(a).is_some()) || total == 0 {
            self.search.painted();
        }
    }
}

/// A name with the parts the query matched highlighted, in display order
/// (right-to-left words turned round: see [`crate::bidi`]).
pub fn marked(ui: &Ui, name: &str, marks: &[std::ops::Range<usize>]) -> LayoutJob {
    if let Some((drawn, marks)) = crate::bidi::visual(name, marks) {
        return marked_as_is(ui, &drawn, &marks);
    }
    marked_as_is(ui, name, marks)
}

/// [`marked`] without reordering.
fn marked_as_is(ui: &Ui, name: &str, marks: &[std::ops::Range<usize>]) -> LayoutJob {
    let normal = TextFormat {
        color: ui.visuals().text_color(),
        font_id: egui::TextStyle::Body.resolve(ui.style()),
        ..TextFormat::default()
    };
    let hit = TextFormat {
        background: ui.visuals().selection.bg_fill.gamma_multiply(0.6),
        color: ui.visuals().strong_text_color(),
        ..normal.clone()
    };
    let mut job = LayoutJob::default();
    let mut at = 0;
    for m in marks {
        if m.start < at || m.end > name.len() {
            continue;
        }
        job.append(&name[at..m.start], 0.0, normal.clone());
        job.append(&name[m.clone()], 0.0, hit.clone());
        at = m.end;
    }
    job.append(&name[at..], 0.0, normal);
    job
}

/// The query box's layout: its text in display order when it holds a
/// right-to-left word (same characters, so the cursor still counts them),
/// else as egui lays out a single line.
pub fn query_layouter(
    ui: &Ui,
    text: &dyn egui::TextBuffer,
    wrap_width: f32,
) -> std::sync::Arc<egui::Galley> {
    let text = text.as_str();
    let drawn = crate::bidi::visual(text, &[]).map(|(d, _)| d);
    let mut job = LayoutJob::simple_singleline(
        drawn.unwrap_or_else(|| text.to_owned()),
        egui::TextStyle::Body.resolve(ui.style()),
        ui.visuals().widgets.inactive.text_color(),
    );
    job.wrap.max_width = wrap_width;
    ui.fonts_mut(|f| f.layout_job(job))
}

impl App {
    /// The optional columns (media metadata, tags), each off until turned
    /// on here; the choice is kept for the next start.
    fn columns_menu(&mut self, ui: &mut Ui) {
        let mut toggled = None;
        ui.menu_button("Columns", |ui| {
            for e in crate::details::Extra::ALL {
                let mut on = self.extras().contains(&e);
                if ui.checkbox(&mut on, e.title()).changed() {
                    toggled = Some(e);
                }
            }
        })
        .response
        .on_hover_text(
            "More columns: a photo's dimensions and date taken, a song's or video's duration, tags",
        );
        if let Some(e) = toggled {
            self.toggle_column(e);
        }
    }
}
