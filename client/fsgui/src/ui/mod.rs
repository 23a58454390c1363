//! Drawing the window, one module per view, each reading its model
//! (`crate::search`, `crate::du`, `crate::dupes`, the app's status) and
//! turning clicks and keys into that model's reducers' calls; nothing here
//! talks to the daemon.
//!
//! - this module: the frame (view switcher, panels) and what every view
//!   shows alike (sizes, counts, times, kind icons);
//! - `search`: the keyboard, the query box with its saved searches, the
//!   results table;
//! - `du`: the breadcrumb, the size bars and the treemap;
//! - `dupes`: the duplicate groups and their copies;
//! - `status`: the status bar (daemon state, roots, watching, notices);
//! - `preview`: the selected row's passage or thumbnail;
//! - `places`: the sidebar of bookmarks and tags;
//! - `dialogs`: the questions asked before acting (trash, rename, open with).

mod dialogs;
mod du;
mod dupes;
mod places;
mod preview;
mod search;
// How a name and the query are laid out (tests check right-to-left order).
pub use search::{marked, query_layouter};
mod status;

use std::time::Duration;

use egui::Ui;

use crate::app::{Action, App, View};
use crate::backend::RowKind;

pub use search::{ROW_HEIGHT, query_id};

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

/// The context menu of a file or folder, in every view: the action chosen.
/// `rename`: one item (a selection of several cannot be renamed).
fn file_menu(ui: &mut Ui, rename: bool) -> Option<Action> {
    let mut chosen = None;
    for (label, action) in [
        ("Open", Action::Open),
        ("Open with…", Action::OpenWith),
        ("Reveal in file manager", Action::Reveal),
        ("Search in this folder", Action::SearchIn),
        ("Copy path", Action::CopyPath),
        ("Copy name", Action::CopyName),
    ] {
        if ui.button(label).clicked() {
            chosen = Some(action);
        }
    }
    ui.separator();
    if rename && ui.button("Rename…").clicked() {
        chosen = Some(Action::Rename);
    }
    if ui.button("Move to trash…").clicked() {
        chosen = Some(Action::Trash);
    }
    if chosen.is_some() {
        ui.close();
    }
    chosen
}

/// A panel's frame without its fill. The window is cleared to the panels'
/// colour before each frame ([`clear_color`]), so a filled panel shaded
/// every pixel of the window a second time; in software GL (Mesa's
/// llvmpipe) each of those pixels costs CPU in every frame.
fn bare(frame: egui::Frame) -> egui::Frame {
    frame.fill(egui::Color32::TRANSPARENT)
}

/// The colour the window is cleared to: the panels' (which draw none of
/// their own, see [`bare`]).
pub fn clear_color(visuals: &egui::Visuals) -> [f32; 4] {
    visuals.panel_fill.to_normalized_gamma_f32()
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

impl App {
    /// Draws one frame (eframe's `App::ui` and the kittest harness call this).
    pub fn ui(&mut self, ui: &mut Ui) {
        self.frames += 1;
        if self.frames == 1 {
            self.apply_theme(ui.ctx());
        }
        self.pump();
        self.expire_notice();
        let ctx = ui.ctx().clone();
        self.keys(&ctx);
        let side = bare(egui::Frame::side_top_panel(ui.style()));
        egui::Panel::top("fsgui-top")
            .frame(side)
            .show(ui, |ui| self.top_bar(ui));
        egui::Panel::bottom("fsgui-status")
            .frame(side)
            .show(ui, |ui| self.status_bar(ui));
        // The preview beside the results, where there is room for both.
        if self.view == View::Search && self.preview_shown && ui.available_width() >= 760.0 {
            self.follow_preview(&ctx);
            egui::Panel::right("fsgui-preview")
                .frame(side)
                .resizable(true)
                .default_size(300.0)
                .min_size(180.0)
                .show(ui, |ui| self.preview_pane(ui));
        }
        // Bookmarks and tags, once there are some.
        if self.view == View::Search && self.has_places() && ui.available_width() >= 640.0 {
            egui::Panel::left("fsgui-places")
                .frame(side)
                .resizable(true)
                .default_size(170.0)
                .min_size(120.0)
                .show(ui, |ui| self.places_pane(ui));
        }
        let central = bare(egui::Frame::central_panel(ui.style()));
        egui::CentralPanel::default_margins()
            .frame(central)
            .show(ui, |ui| match self.view {
                // The optional columns may not fit beside the sidebar and the
                // preview: the table scrolls sideways then.
                View::Search if !self.extras().is_empty() => {
                    egui::ScrollArea::horizontal()
                        .id_salt("fsgui-results-wide")
                        .scroll_bar_visibility(
                            egui::scroll_area::ScrollBarVisibility::VisibleWhenNeeded,
                        )
                        .auto_shrink([false, false])
                        .show(ui, |ui| {
                            // The table takes the width it is given: give it
                            // what every column needs at first.
                            let need = search::BASE_WIDTH
                                + self.extras().iter().map(|e| e.width() + 8.0).sum::<f32>();
                            let size =
                                egui::vec2(ui.available_width().max(need), ui.available_height());
                            ui.allocate_ui(size, |ui| self.results_table(ui));
                        });
                }
                View::Search => self.results_table(ui),
                View::DiskUsage => self.du_view(ui),
                View::Duplicates => self.dupes_view(ui),
            });
        self.dialogs(ui);
        // Nothing animates: a frame is drawn when something arrives (see
        // `backend::BACKGROUND_WAKE`) or the user acts, and once more when
        // a notice is due to go.
        if let Some(n) = &self.notice {
            let left = n.lasts().saturating_sub(n.at.elapsed());
            ctx.request_repaint_after(left + Duration::from_millis(50));
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
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let dark = ui.visuals().dark_mode;
                let (sign, hint) = if dark {
                    ("☀", "Switch to the light theme")
                } else {
                    ("🌙", "Switch to the dark theme")
                };
                if ui.button(sign).on_hover_text(hint).clicked() {
                    self.toggle_theme(ui.ctx(), !dark);
                }
            });
        });
        if self.view == View::Search {
            self.query_row(ui);
        }
        ui.add_space(2.0);
    }
}

impl App {
    /// The theme kept in the settings, if one was chosen.
    fn apply_theme(&self, ctx: &egui::Context) {
        match self.settings.theme.as_deref() {
            Some("light") => ctx.set_theme(egui::Theme::Light),
            Some("dark") => ctx.set_theme(egui::Theme::Dark),
            _ => return,
        }
        // This frame's window was cleared in the theme before (see
        // `clear_color`): one more, cleared in this one.
        ctx.request_repaint();
    }

    /// The toggle: that theme now, and kept for the next start.
    fn toggle_theme(&mut self, ctx: &egui::Context, dark: bool) {
        self.settings.theme = Some(if dark { "dark" } else { "light" }.to_owned());
        self.apply_theme(ctx);
        self.save_settings();
        self.focus_query = self.view == View::Search;
    }
}

/// Every symbol the window draws, for the glyph test.
#[cfg(test)]
const SYMBOLS: &[&str] = &[
    "…", "›", "·", "×", "⏷", "⏵", "★", "☆", "☀", "🌙", "⚙", "⚠", "⟳", "⬆", "⬇", "🎞", "🎵", "📁",
    "📦", "🔍", "🔗", "🕘", "🖴", "🖹", "🖼", "🗋", "🗐", "📄",
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
